/**
 * The root entry reads like a table of contents: what an app developer calls. The zod schemas, the
 * constants they are built from and the parsers are in `stepwire/schema`.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as root from '../../src/index.js';
import * as schema from '../../src/schema-entry.js';

/** Every value the root exports, by what it is for. A new one is added here on purpose. */
const ROOT_VALUES = {
  'the engine and its registries': [
    'Engine',
    'Catalog',
    'WorkflowRegistry',
    'ScriptRegistry',
    'ActionRegistry',
    'Applications',
    'AppRuntime',
  ],
  builders: [
    'entity',
    'EntityBuilder',
    'relationship',
    'RelationshipBuilder',
    'workflow',
    'WorkflowBuilder',
    'l2',
    'getEntity',
    'writeEntity',
    'atlasGet',
    'transform',
    'request',
    'wait',
    'runWorkflow',
    'application',
    'ApplicationBuilder',
    'ScreenBuilder',
    'text',
    'form',
    'datagrid',
    'button',
  ],
  'errors and guards': [
    'StepwireError',
    'ValidationError',
    'ConflictError',
    'NotFoundError',
    'SheetError',
    'WriteRejectedError',
    'LimitError',
    'RequestRefusedError',
    'CancelledError',
    'NonRetryableError',
    'ScriptError',
    'UpstreamError',
    'ForbiddenError',
    'StorageError',
    'StepReferenceError',
    'MissingSecretError',
    'TriggerFireError',
    'MailOutcomeUnknownError',
    'isStepwireError',
    'isValidationError',
    'isConflictError',
    'isNotFoundError',
    'isSheetError',
    'isWriteRejectedError',
    'isLimitError',
    'isRequestRefusedError',
    'isCancelledError',
    'isNonRetryableError',
    'isScriptError',
    'isUpstreamError',
    'isForbiddenError',
    'isStorageError',
    'formatIssue',
    'formatIssues',
  ],
  adapters: [
    'MemoryStorage',
    'MemorySpreadsheets',
    'MemoryFileStore',
    'MemoryChat',
    'SlackChat',
    'WebhookChat',
    'MemoryMail',
    'HttpMail',
    'QuickJsSandbox',
  ],
  'documents and pictures': [
    'renderPdf',
    'encodeBase64',
    'decodeBase64',
    'renderScreen',
    'escapeHtml',
    'workflowGraphSvg',
    'runTimelineSvg',
    'runTimelineText',
  ],
};

/** Catalogue values that belong to `stepwire/schema`, never to the root. */
const SCHEMA_ONLY = [
  'EntitySchema',
  'WorkflowSchema',
  'ApplicationSchema',
  'RelationshipSchema',
  'TriggerSchema',
  'RunRecordSchema',
  'StepSchema',
  'COLUMN_TYPES',
  'WRITE_MODES',
  'STEP_TYPES',
  'FILTER_OPERATORS',
  'RUN_STATUSES',
  'ERROR_CODES',
  'check',
  'parse',
  'parsePath',
  'findReferences',
  'isResourceName',
  'parseRedirectUrl',
  'compileSchema',
  'errorAnswer',
  'issuesUnder',
];

describe('the root entry', () => {
  it('exports exactly the values an app developer calls', () => {
    expect(Object.keys(root).sort()).toEqual(Object.values(ROOT_VALUES).flat().sort());
  });

  it('exports no zod schema, no UPPER_SNAKE constant and no parser', () => {
    const catalogue = Object.entries(root).filter(
      ([name, value]) => value instanceof z.ZodType || /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/.test(name),
    );
    expect(catalogue.map(([name]) => name)).toEqual([]);
    expect(SCHEMA_ONLY.filter((name) => name in root)).toEqual([]);
  });

  it('leaves them to stepwire/schema', () => {
    expect(SCHEMA_ONLY.filter((name) => !(name in schema))).toEqual([]);
    expect(schema.EntitySchema).toBeInstanceOf(z.ZodType);
  });
});
