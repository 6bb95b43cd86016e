/**
 * zod schemas of every resource: the single source of truth for shapes.
 * @module
 */
export * from './data-table.js';
export {
  COLUMN_TYPES,
  NameSchema,
  EntityColumnSchema,
  ColumnNumberRulesSchema,
  SpreadsheetConfigSchema,
  EntitySchema,
  EntityCheckSchema,
  ExpressionSchema,
  LookupSchema,
  RollupSchema,
  ROLLUP_FUNCTIONS,
  COLUMN_FORMATS,
  MAX_EXPRESSION_LENGTH,
  type EntityCheck,
  type Lookup,
  type Rollup,
  type ColumnType,
  type Entity,
  type EntityBody,
  type EntityColumn,
  type SpreadsheetConfig,
} from './entity.js';
export * from './resource-name.js';
export * from './number-rules.js';
export * from './relationship.js';
export * from './get-entity.js';
export * from './steps/index.js';
export * from './workflow.js';
export * from './application.js';
export * from './actions.js';
export * from './run-record.js';
export { check, parse, IssueSchema, type CheckResult } from './issues.js';
export { parsePath, formatSegments, findReferences, isWholeReference, FORBIDDEN_SEGMENTS } from './path.js';
export type { PathSegment, ParsedPath, ReferenceMatch } from './path.js';
export type {
  ItemFailure,
  RunError,
  RunRecord,
  RunStatus,
  RunSummary,
  StepItems,
  StepWait,
  StepRecord,
  StepStatus,
} from './run-record-types.js';
export * from './trigger.js';
export { AccessPolicySchema, RoleSchema, RowRuleSchema, ColumnRuleSchema, PERMISSIONS } from './access.js';
