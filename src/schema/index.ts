/**
 * zod schemas of every resource in the spec: the single source of truth for shapes.
 * @module
 */
export * from './data-table.js';
export * from './entity.js';
export * from './relationship.js';
export * from './get-entity.js';
export * from './workflow.js';
export * from './application.js';
export * from './actions.js';
export * from './run-record.js';
export { check, parse, IssueSchema, type CheckResult } from './issues.js';
export { parsePath, formatSegments, findReferences, isWholeReference, FORBIDDEN_SEGMENTS } from './path.js';
export type { PathSegment, ParsedPath, ReferenceMatch } from './path.js';
