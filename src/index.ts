/**
 * stepwire: an embeddable SDK for spreadsheet-backed entities, workflows of steps joined by wires,
 * and application screens. This entry is edge-safe: no Node built-ins.
 * @example
 * ```ts
 * import { Engine, MemorySpreadsheets } from 'stepwire';
 * const engine = new Engine({ spreadsheets: new MemorySpreadsheets({ shop: { orders: [['id', 'total'], [1, 9.5]] } }) });
 * ```
 * @module
 */
export { Engine, type RunHandle, type RunListQuery, type WorkOptions } from './engine/engine.js';
export { TriggerFireError, type TriggerFiring } from './engine/trigger-fire.js';
export type { EngineOptions, EngineLimits, EngineSecurity } from './engine/options.js';
export type { RunOptions } from './engine/run.js';
export type {
  RunRecord,
  RunSummary,
  StepRecord,
  RunEvent,
  RunError,
  RunStatus,
  StepStatus,
} from './engine/record.js';
export { WorkflowRegistry } from './engine/workflows.js';
export {
  ScriptRegistry,
  type TransformContext,
  type TransformFunction,
  type StoredScript,
} from './engine/scripts.js';
export { StepReferenceError } from './engine/references.js';
export { compileSchema, type CompiledSchema } from './json-schema/index.js';
export {
  Catalog,
  type EntityRows,
  type EntityWrite,
  type WritableRows,
  type WriteCount,
  type WriteResult,
  type UpsertResult,
} from './catalog/catalog.js';
export {
  ActionRegistry,
  type ActionContext,
  type ActionDefinition,
  type ActionStub,
  type StubBehaviour,
} from './actions/registry.js';
export { Applications } from './app/applications.js';
export * from './app/index.js';
export * from './adapters/types.js';
export type * from './adapters/queue.js';
export * from './adapters/memory/index.js';
export * from './adapters/chat/index.js';
export * from './errors/index.js';
export * from './schema/index.js';
export * from './builders/index.js';
export { renderPdf, type RenderPdfOptions, type PdfVariable } from './pdf/index.js';
export {
  workflowGraphSvg,
  runTimelineSvg,
  runTimelineText,
  type WorkflowGraphOptions,
  type RunTimelineOptions,
  type RunTimelineTextOptions,
} from './pictures/index.js';
export { encodeBase64, decodeBase64 } from './pdf/base64.js';
export {
  QuickJsSandbox,
  type ScriptSandbox,
  type ScriptInput,
  type ScriptResult,
  type ScriptLimits,
  type EntityData,
} from './script/index.js';
