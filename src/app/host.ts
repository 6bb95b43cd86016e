/**
 * What applications need from the engine, and nothing more: the engine hands itself over as this
 * narrow interface, so the application layer never depends on the engine's code.
 * @module
 */
import type { StorageAdapter } from '../adapters/types.js';
import type { Catalog } from '../catalog/catalog.js';
import type { Workflow } from '../schema/index.js';
import type { RunRecord } from '../schema/index.js';

/** The engine as applications see it: what an application runtime is built on. */
export interface AppHost {
  /** Entity definitions, reads and writes: for grids, forms that write rows, and config checks. */
  readonly catalog: Pick<Catalog, 'getEntity' | 'listEntities' | 'getDefinition' | 'write'>;
  /** Workflow definitions, for config checks and the input rules forms show. */
  readonly workflows: { list(): Promise<Workflow[]>; get?(name: string): Promise<Workflow> };
  /** Where configs are stored, and the limits of form runs and grid pages. */
  readonly options: {
    readonly storage: StorageAdapter;
    readonly limits: { readonly formRunTimeoutMs: number; readonly maxPageSize: number };
  };
  /**
   * Runs a form's workflow to its end; `key` makes a repeated submit one run, `traceparent` (W3C)
   * parents the run's trace span.
   */
  run(
    name: string,
    input: unknown,
    options: { timeoutMs: number; key?: string; traceparent?: string | undefined },
  ): Promise<RunRecord>;
}
