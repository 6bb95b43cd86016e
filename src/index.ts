/**
 * stepwire: an embeddable SDK for spreadsheet-backed entities, workflows of steps joined by wires,
 * and application screens. This entry is edge-safe: no Node built-ins.
 *
 * It holds what an app developer calls: the {@link Engine} and its registries, the builders, the
 * errors and their guards, the adapter contracts with the in-memory and chat adapters, the spec's
 * definition types and the run records. The zod schemas, constants and parsers are in
 * `stepwire/schema`.
 * @example
 * ```ts
 * import { Engine, MemorySpreadsheets } from 'stepwire';
 * const engine = new Engine({ spreadsheets: new MemorySpreadsheets({ shop: { orders: [['id', 'total'], [1, 9.5]] } }) });
 * ```
 * @module
 */

// The engine and the registries it holds (`engine.catalog`, `engine.workflows`...).
export { Engine, type RunHandle, type RunListQuery, type WorkOptions } from './engine/engine.js';
export type {
  Approval,
  ApprovalLink,
  ApprovalLinkInput,
  ApprovalStatus,
  ApprovalsApi,
  DecisionInput,
  EventSent,
} from './engine/waits/approvals.js';
export type { Decision } from './engine/waits/wait-book.js';
export type { RetryOptions } from './engine/retry-run.js';
export type { BulkFilter, BulkInput, BulkResult } from './engine/bulk.js';
export type { EngineOptions, EngineLimits, EngineSecurity } from './engine/options.js';
export type { RunOptions } from './engine/run.js';
export {
  Catalog,
  type EntityRows,
  type EntityWrite,
  type WritableRows,
  type WriteCount,
  type WriteResult,
  type UpsertResult,
} from './catalog/catalog.js';
export { WorkflowRegistry } from './engine/workflows.js';
export {
  ScriptRegistry,
  type TransformContext,
  type TransformFunction,
  type StoredScript,
} from './engine/scripts.js';
export {
  ActionRegistry,
  type ActionContext,
  type ActionDefinition,
  type ActionStub,
  type StubBehaviour,
} from './actions/registry.js';
export { Applications } from './app/applications.js';
export * from './app/index.js';
export { TriggerFireError, type TriggerFiring } from './engine/trigger-fire.js';

// Builders of definitions.
export * from './builders/index.js';

// Errors and their guards.
export {
  StepwireError,
  ValidationError,
  ConflictError,
  NotFoundError,
  SheetError,
  WriteRejectedError,
  LimitError,
  RequestRefusedError,
  CancelledError,
  NonRetryableError,
  ScriptError,
  UpstreamError,
  ForbiddenError,
  StorageError,
  isStepwireError,
  isValidationError,
  isConflictError,
  isNotFoundError,
  isSheetError,
  isWriteRejectedError,
  isLimitError,
  isRequestRefusedError,
  isCancelledError,
  isNonRetryableError,
  isScriptError,
  isUpstreamError,
  isForbiddenError,
  isStorageError,
  formatIssue,
  formatIssues,
  type Issue,
  type StepwireErrorOptions,
  type StorageErrorCode,
} from './errors/index.js';
export { StepReferenceError } from './engine/references.js';
export { MissingSecretError, type SecretsOption } from './engine/secrets.js';

// Access control: who is asking, the policy, the view of the engine a principal gets, the audit log.
export type { Principal } from './access/principal.js';
export type { AccessPolicy, Permission, Role, RowRule, ColumnRule } from './schema/access.js';
export type { EngineView } from './engine/engine-view.js';
export type { AuditLog, AuditEntry, AuditRecord, AuditQuery, AuditPage } from './access/audit.js';
export type { RunInitiator } from './schema/run-record-types.js';

// Adapters: the contracts, the in-memory defaults, chat, and the script sandbox.
export * from './adapters/types.js';
export type * from './adapters/queue.js';
export * from './adapters/memory/index.js';
export * from './adapters/chat/index.js';
export * from './adapters/mail/index.js';
export {
  QuickJsSandbox,
  type QuickJsSandboxOptions,
  type QuickJsVariant,
  type ScriptSandbox,
  type ScriptInput,
  type ScriptResult,
  type ScriptLimits,
  type EntityData,
} from './script/index.js';

// The spec's definitions (as written, `...Body`, and as stored) and the run records.
export type {
  Entity,
  EntityBody,
  EntityColumn,
  ColumnType,
  SpreadsheetConfig,
  Relationship,
  RelationshipBody,
  Workflow,
  WorkflowBody,
  WorkflowInputBody,
  WorkflowInput,
  WorkflowOutput,
  Wire,
  Step,
  StepBody,
  StepOf,
  StepBodyOf,
  StepTypeName,
  StepRetry,
  Condition,
  OnError,
  L2Data,
  AtlasData,
  RequestData,
  Application,
  ApplicationBody,
  Screen,
  Component,
  FormItem,
  WriteJob,
  Trigger,
  TriggerBody,
  GetEntityInput,
  GetEntityOutput,
  ReadEntityBody,
  Operation,
  Filter,
  FilterOperator,
  OrderBy,
  SelectColumn,
  DataTable,
  Column,
  TableColumn,
  RowsTable,
  StringConfig,
  NumberConfig,
  WriteMode,
  WriteRows,
  WriteRowsBody,
  WriteEntityInput,
  CreatePdfInput,
  UploadFileInput,
  SendMessageInput,
  SendMessageOutput,
  SendEmailInput,
  SendEmailOutput,
  RunWorkflowInput,
  StepItems,
  StepWait,
  ItemFailure,
} from './schema/index.js';
export type {
  RunRecord,
  RunSummary,
  StepRecord,
  RunEvent,
  RunError,
  RunStatus,
  StepStatus,
} from './engine/record.js';

// Documents and pictures.
export { renderPdf, type RenderPdfOptions, type PdfVariable, type ValueFormat } from './pdf/index.js';
export { encodeBase64, decodeBase64 } from './pdf/base64.js';
export {
  workflowGraphSvg,
  runTimelineSvg,
  runTimelineText,
  type WorkflowGraphOptions,
  type RunTimelineOptions,
  type RunTimelineTextOptions,
} from './pictures/index.js';
