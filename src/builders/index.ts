/**
 * Typed builders that produce the plain, validated definitions the HTTP API takes: entities,
 * relationships, workflows and applications. The types remember declared names, so a primary key, a
 * wire, a reference or a start screen naming something undeclared does not compile.
 * @module
 */
export {
  entity,
  EntityBuilder,
  type ColumnOptions,
  type EntityDefinition,
  type SheetOptions,
} from './entity.js';
export {
  relationship,
  RelationshipBuilder,
  type RelationshipDefinition,
  type ForeignKeyOptions,
  type EntityRef,
  type ColumnsOf,
  type EntityNameOf,
} from './relationship.js';
export {
  workflow,
  WorkflowBuilder,
  type WorkflowDefinition,
  type InputOf,
  type RefPath,
  type ItemPath,
  type SecretPath,
  type RefContext,
  type StepInput,
  type WorkflowInputOptions,
  type WireOptions,
  type OutputData,
} from './workflow.js';
export {
  l2,
  getEntity,
  writeEntity,
  atlasGet,
  transform,
  request,
  wait,
  runWorkflow,
  type StepDef,
  type RefsIn,
  type StepOptions,
  type StepCondition,
  type EntityOperation,
  type FilterOperatorName,
  type Paging,
  type TransformOptions,
  type L2DataBody,
  type RequestDataBody,
  type AtlasDataBody,
  type WaitDataBody,
} from './steps.js';
export {
  application,
  ApplicationBuilder,
  ScreenBuilder,
  text,
  form,
  datagrid,
  button,
  type ComponentDef,
  type FormOptions,
  type ScreenRedirect,
} from './application.js';
export type { FromJsonSchema, JsonSchemaLiteral } from './json-schema-types.js';
