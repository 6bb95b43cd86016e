/**
 * The `request` workflow step: HTTP requests from `request_data`, with an address policy checked before
 * every connection, timeouts, a response size cap, checked redirects and classified retries.
 * @module
 */
export { performRequest } from './perform.js';
export { checkDestination, isAllowedDestination } from './policy.js';
export { classifyAddress, type AddressClass } from './address.js';
export { REQUEST_METHODS, IDEMPOTENT_METHODS, type RequestMethod } from './prepare.js';
export {
  DEFAULT_REQUEST_LIMITS,
  type RequestData,
  type RequestOutput,
  type RequestOptions,
  type RequestRetryOptions,
  type RequestTimeouts,
  type Resolver,
} from './types.js';
