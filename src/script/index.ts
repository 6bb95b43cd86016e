/**
 * Sandboxed transform scripts: run untrusted JavaScript over input entities with no host access.
 * @module
 */

export { QuickJsSandbox, type QuickJsSandboxOptions, type QuickJsVariant } from './quickjs-sandbox.js';
export {
  DEFAULT_SCRIPT_LIMITS,
  type EntityData,
  type ScriptInput,
  type ScriptLimits,
  type ScriptResult,
  type ScriptSandbox,
} from './types.js';
