/**
 * Node-only parts of stepwire: a local-folder file store, spreadsheets kept as `.xlsx` or `.csv`
 * files, the worker-thread script sandbox, a DNS resolver for request steps, project folders, and a
 * small HTTP server for the fetch handler.
 * @module
 */
export * from '../adapters/node/index.js';
export { serve, type ServeOptions, type RunningServer } from './serve.js';
export { loadProject, type LoadProjectOptions, type LoadedProject } from './project.js';
export { envSecrets } from './env-secrets.js';
export { SmtpMail, type SmtpMailOptions } from './smtp-mail.js';
export {
  readProjectSettings,
  ProjectSettingsSchema,
  SETTINGS_FILE,
  type ProjectSettings,
} from './project-settings.js';
