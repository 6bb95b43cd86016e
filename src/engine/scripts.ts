import { createOrReplace } from '../adapters/create-or-replace.js';
import { NotFoundError, ValidationError } from '../errors/index.js';
import type { StorageAdapter } from '../adapters/types.js';
import { ResourceNameSchema, check, type RowsTable } from '../schema/index.js';
import {
  DefinitionHistory,
  type DefinitionWriteOptions,
  type VersionPage,
  type VersionQuery,
} from '../adapters/definition-history.js';

/** What a trusted transform function receives: the same contract as a sandboxed script. */
export interface TransformContext {
  /** Rows of an input entity of the step, as objects keyed by column name. */
  getEntity(name: string): Record<string, unknown>[];
  /**
   * Writes rows (objects, or a data table whose columns are names or `{ name }`) to an output entity
   * of the step; calls add up. Rows that are neither, or a table with a bad or repeated column, throw
   * a `WriteRejectedError` naming the position.
   */
  writeEntity(name: string, rows: readonly Record<string, unknown>[] | RowsTable): void;
  /** Adds a line to the step's log. */
  log(...values: unknown[]): void;
}

/** A trusted transform written in TypeScript by the host application; it runs in-process at full speed. */
export type TransformFunction = (context: TransformContext) => void | Promise<void>;

/** A stored script. */
export interface StoredScript {
  /** Its name, referred to by `code_file`. */
  name: string;
  /** JavaScript source. */
  source: string;
}

/**
 * Transform scripts, reached as `engine.scripts`. Stored sources always run in the sandbox;
 * functions registered with {@link ScriptRegistry.register} are trusted and run in-process.
 */
export class ScriptRegistry {
  #storage: StorageAdapter;
  #trusted = new Map<string, TransformFunction>();
  #ready: () => Promise<void>;
  #history: DefinitionHistory;

  /** @internal */
  constructor(storage: StorageAdapter, ready: () => Promise<void>) {
    this.#storage = storage;
    this.#ready = ready;
    this.#history = new DefinitionHistory(storage);
  }

  /** Stores (or replaces) a script's source under `name`; `created` says whether none was stored before. */
  async put(
    name: string,
    source: string,
    options: DefinitionWriteOptions = {},
  ): Promise<StoredScript & { created: boolean }> {
    await this.#ready();
    const checked = check(ResourceNameSchema, name);
    if (!checked.ok) throw new ValidationError(checked.issues.map((i) => ({ ...i, path: 'name' })));
    if (typeof source !== 'string')
      throw new ValidationError([
        { code: 'invalid_type', path: 'source', message: 'the script source must be text' },
      ]);
    return this.#history.changing('script', name, async () => {
      const created = await createOrReplace(this.#storage, 'scripts', name, { name, source });
      await this.#history.record(
        'script',
        name,
        created ? 'create' : 'replace',
        { name, source },
        options.by,
      );
      return { name, source, created };
    });
  }

  /** The source of a stored script. @throws {@link NotFoundError} */
  async get(name: string): Promise<string> {
    await this.#ready();
    const script = await this.#storage.get<StoredScript>('scripts', name);
    if (!script) throw new NotFoundError('script', name);
    return script.source;
  }

  /** Every stored script's name, ordered. */
  async list(): Promise<string[]> {
    await this.#ready();
    return (await this.#storage.list('scripts')).map((entry) => entry.key);
  }

  /** Removes a stored script; returns whether it existed. */
  async delete(name: string, options: DefinitionWriteOptions = {}): Promise<boolean> {
    await this.#ready();
    return this.#history.changing('script', name, async () => {
      const existed = await this.#storage.delete('scripts', name);
      if (existed) await this.#history.record('script', name, 'delete', null, options.by);
      return existed;
    });
  }

  /**
   * The versions of a stored script, oldest first, a page at a time: one per put and delete.
   * @throws {@link NotFoundError} when no script of that name was ever stored.
   */
  async versions(name: string, query: VersionQuery = {}): Promise<VersionPage<StoredScript>> {
    await this.#ready();
    return this.#history.list('script', name, query, () => this.#storage.get('scripts', name));
  }

  /** Registers a trusted transform function under a `code_file` name; it wins over a stored script of that name. */
  register(name: string, fn: TransformFunction): void {
    if (typeof fn !== 'function') throw new TypeError('a trusted transform must be a function');
    this.#trusted.set(name, fn);
  }

  /** The trusted function registered under `name`. @internal */
  trusted(name: string): TransformFunction | undefined {
    return this.#trusted.get(name);
  }

  /** True when `name` is a trusted function or a stored script. @internal */
  async exists(name: string): Promise<boolean> {
    return this.#trusted.has(name) || (await this.#storage.get('scripts', name)) !== undefined;
  }
}
