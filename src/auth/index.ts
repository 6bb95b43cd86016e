/**
 * Sign-in for people and programs: API keys, users with passwords, cookie sessions.
 * @module
 */
export { ApiKeys, type ApiKey, type ApiKeyInput, type AuthStoreOptions, type CreatedApiKey } from './keys.js';
export {
  Users,
  type SignInLimits,
  type SignInResult,
  type User,
  type UserInput,
  type UsersOptions,
} from './users.js';
export { Sessions, type CreatedSession, type Session, type SessionOptions } from './sessions.js';
export {
  hashPassword,
  verifyPassword,
  MIN_PASSWORD_LENGTH,
  type HashPasswordOptions,
  type PasswordAlgorithm,
} from './passwords.js';
