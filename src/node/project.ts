/**
 * `loadProject`: an engine built from a project folder of JSON definitions, scripts and CSV seed
 * sheets, the convention the `stepwire` command reads.
 * @module
 */
import type { Dirent } from 'node:fs';
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join, resolve } from 'node:path';
import { Engine } from '../engine/engine.js';
import type { EngineLimits, EngineOptions } from '../engine/options.js';
import { MemoryChat, MemoryFileStore, MemorySpreadsheets } from '../adapters/memory/index.js';
import type { CallOptions, CellValue, FileInput, FileStore, StoredFile } from '../adapters/types.js';
import {
  ConflictError,
  StepwireError,
  formatIssue,
  issuesUnder,
  isStepwireError,
  ValidationError,
  type Issue,
} from '../errors/index.js';
import {
  RelationshipSchema,
  TriggerSchema,
  type ApplicationBody,
  type Entity,
  type EntityBody,
  type RelationshipBody,
  type TriggerBody,
  type WorkflowBody,
} from '../schema/index.js';
import { storedEntity, withoutComputed } from '../computed/columns.js';
import { readJsonFile } from './json-file.js';
import type { AccessPolicy } from '../schema/access.js';
import { readProjectSettings, type ProjectSettings } from './project-settings.js';
import { LocalFileStore, safeName } from '../adapters/node/local-file-store.js';
import { csvLayout, parseCsv, writeCsvCells } from '../adapters/node/csv.js';
import { replaceFile } from '../adapters/node/atomic-write.js';
import { FileSpreadsheets } from '../adapters/node/file-spreadsheets.js';

/** Options of {@link loadProject}. */
export interface LoadProjectOptions {
  /**
   * Options of the engine. Adapters given here win over the in-memory ones the project makes: with
   * `spreadsheets` set, `sheets/` is not loaded; `files` entries are added beside (or over) `memory`.
   */
  engineOptions?: EngineOptions;
  /** When set, every file stored in the `memory` file store is also written into this folder. */
  outDir?: string;
  /** Told the path of every file written into `outDir`. */
  onFileWritten?: (path: string) => void;
  /** Prefix of the `file_url`s the `memory` file store hands out. @default "memory://files/" */
  filesBaseUrl?: string;
  /**
   * The store behind the `memory` provider that a project's `upload_file` steps name, instead of
   * the in-memory one: a deployment's shared store, such as `openPostgres(...).files` (what
   * `stepwire serve` and `stepwire worker` give when a database is open) or a `LocalFileStore` on a
   * shared folder (`--files`). `filesBaseUrl` is then unused and `files` stays empty.
   * @default a `MemoryFileStore`
   */
  fileStore?: FileStore;
  /**
   * Where entity rows live. `memory`: `sheets/` seeds in-memory sheets and the files are never
   * changed. `files`: the files in `sheets/` are the spreadsheets (`FileSpreadsheets`), so appends
   * land in them and survive a restart; an entity without a file gets one with its header row.
   * @default "memory"
   */
  sheets?: 'memory' | 'files';
}

/** A loaded project: its engine and the in-memory adapters it runs on. */
export interface LoadedProject {
  /** The engine, with every definition of the folder stored. */
  engine: Engine;
  /**
   * The spreadsheets of `sheets/`: in memory, seeded from the files, or the files themselves with
   * `sheets: "files"` (unused when `engineOptions.spreadsheets` was given).
   */
  spreadsheets: MemorySpreadsheets | FileSpreadsheets;
  /** The `memory` file store that `upload_file` steps name (empty and unused with `fileStore`). */
  files: MemoryFileStore;
  /** Where `send_message` posts (unless `engineOptions.chat` was given). */
  chat: MemoryChat;
  /** Warnings that do not stop the project from loading (an unused sheet, an unknown folder), with file and path. */
  problems: Issue[];
  /** The settings of `stepwire.json` (`{}` without one); its `allowHosts` and `limits` are in the engine. */
  settings: ProjectSettings;
}

/** The access policy of a project, beside `stepwire.json`. */
const ACCESS_FILE = 'access.json';

const FOLDERS = [
  'entities',
  'relationships',
  'workflows',
  'applications',
  'triggers',
  'scripts',
  'sheets',
] as const;

/**
 * Loads a project folder into a new engine. The folder holds `entities/*.json`,
 * `relationships/*.json`, `workflows/*.json` and `applications/*.json` (bodies as the HTTP API takes
 * them; an application's name is its file name), `scripts/*.js` (the `code_file` is the file name,
 * e.g. `summarize.js`) and `sheets/<spreadsheet_id>/<sheet_name>.csv` (seed rows; cells stay text and
 * the entity's column types coerce them; empty cells are null). They load in that order: entities,
 * relationships, scripts, workflows, applications, `triggers/*.json`, then `access.json` (the access
 * policy, checked against the entities). Finally every entity is read once, so bad cells show.
 * `stepwire.json`, when present, gives the engine its `allowHosts` and `limits` (options given in
 * `engineOptions` win).
 * @throws `ValidationError` listing every problem, each `path` being `<file>: <json path>`.
 * @example
 * ```ts
 * const { engine, files } = await loadProject('examples/invoices');
 * const run = await engine.run('invoice', { customer_id: 1 });
 * ```
 */
export async function loadProject(dir: string, options: LoadProjectOptions = {}): Promise<LoadedProject> {
  const root = resolve(dir);
  const info = await stat(root).catch(() => undefined);
  if (!info?.isDirectory())
    throw new ValidationError([{ code: 'not_found', path: dir, message: `${dir} is not a folder` }]);
  const issues: Issue[] = [];
  const problems: Issue[] = [];
  const settings = await readProjectSettings(root);
  const engineOptions = withSettings(options.engineOptions ?? {}, settings);

  const inFiles = options.sheets === 'files';
  const memorySheets = new MemorySpreadsheets();
  const spreadsheets = inFiles ? new FileSpreadsheets({ dir: join(root, 'sheets') }) : memorySheets;
  const sheetFiles = new Map<string, string>();
  if (engineOptions.spreadsheets === undefined) await loadSheets(root, memorySheets, sheetFiles, issues);
  else if (await isDir(join(root, 'sheets')))
    problems.push({
      code: 'ignored',
      path: 'sheets',
      message: 'not loaded: engineOptions.spreadsheets is given',
    });

  const files = new MemoryFileStore(
    options.filesBaseUrl === undefined ? {} : { baseUrl: options.filesBaseUrl },
  );
  const chat = new MemoryChat();
  const store = options.fileStore ?? files;
  const memory =
    options.outDir === undefined
      ? store
      : mirror(store, new LocalFileStore({ dir: options.outDir }), options.onFileWritten);
  const engine = new Engine({
    ...engineOptions,
    spreadsheets: engineOptions.spreadsheets ?? spreadsheets,
    files: { memory, ...engineOptions.files },
    chat: engineOptions.chat ?? chat,
  });

  for (const entry of await readdir(root, { withFileTypes: true })) {
    if (
      entry.isDirectory() &&
      !(FOLDERS as readonly string[]).includes(entry.name) &&
      !entry.name.startsWith('.') &&
      entry.name !== 'out' &&
      entry.name !== 'node_modules'
    ) {
      problems.push({
        code: 'unknown_folder',
        path: entry.name,
        message: `folder "${entry.name}" is not part of a project (known: ${FOLDERS.join(', ')})`,
      });
    }
  }

  const entities: Entity[] = [];
  const defined = new Map<string, string>();
  /** Entities of entities/ by file name, loaded or not: a step naming one that failed has no problem of its own. */
  const entityFiles = new Set<string>();
  // Computed columns may read through relationships, which need the entities first: entities are
  // registered without them, then the relationships, then the whole definitions. When the database
  // holds the relationships already (another process loaded the project), the whole definition is
  // stored at once: a process starting beside a running one never leaves an entity without its
  // computed columns for the other to read.
  const computed: { file: string; body: EntityBody }[] = [];
  for (const file of await listFiles(root, 'entities', '.json', problems)) {
    entityFiles.add(baseName(file, '.json'));
    const body = await readJsonFile(root, file, issues);
    if (body !== undefined && definedOnce('entity', named(body, file), file, defined, issues))
      await attempt(file, issues, async () => {
        const whole = named(body, file) as EntityBody;
        const stored = withoutComputed(whole) as EntityBody;
        if (stored !== whole) {
          const atOnce = await engine.catalog.upsertEntity(whole).catch(() => undefined);
          if (atOnce) return void entities.push(atOnce.entity);
          // Another process may have stored the whole definition meanwhile: it is not stripped again.
          const held = await engine.catalog.getDefinition(whole.name).catch(() => undefined);
          const names = new Set(held?.columns.map((c) => c.name));
          if (held && whole.columns.every((c) => names.has(c.name))) {
            entities.push(held);
            return void computed.push({ file, body: whole });
          }
        }
        entities.push((await engine.catalog.upsertEntity(stored)).entity);
        if (stored !== whole) computed.push({ file, body: whole });
      });
  }
  for (const file of await listFiles(root, 'relationships', '.json', problems)) {
    const body = await readJsonFile(root, file, issues);
    if (body !== undefined && definedOnce('relationship', named(body, file), file, defined, issues))
      await attempt(file, issues, () => keepRelationship(engine, named(body, file)));
  }
  for (const { file, body } of computed)
    await attempt(file, issues, async () => {
      const entity = (await engine.catalog.upsertEntity(body)).entity;
      entities[entities.findIndex((e) => e.name === entity.name)] = entity;
    });
  const scripts = new Set<string>();
  for (const file of await listFiles(root, 'scripts', '.js', problems)) {
    const name = file.slice('scripts/'.length);
    const source = await readFile(join(root, file), 'utf8');
    await attempt(file, issues, async () => {
      await engine.scripts.put(name, source);
      scripts.add(name);
    });
  }
  for (const file of await listFiles(root, 'workflows', '.json', problems)) {
    const body = await readJsonFile(root, file, issues);
    if (body === undefined || !definedOnce('workflow', named(body, file), file, defined, issues)) continue;
    const missing = missingScripts(body, scripts).map((m) => ({
      code: 'unknown_script',
      path: `${file}: ${m.path}`,
      message: `script "${m.name}" is not in scripts/ (found: ${[...scripts].join(', ') || 'none'})`,
    }));
    const known = new Set((await engine.catalog.listEntities()).map((entity) => entity.name));
    const unknown = unknownEntities(body).flatMap(({ name, path }) =>
      known.has(name) || entityFiles.has(name)
        ? []
        : [
            {
              code: 'unknown_entity',
              path: `${file}: ${path}`,
              message: `entity "${name}" is not in entities/ (found: ${[...known].join(', ') || 'none'})`,
            },
          ],
    );
    issues.push(...missing, ...unknown);
    if (missing.length === 0)
      await attempt(file, issues, () => engine.workflows.replace(named(body, file) as WorkflowBody));
  }
  for (const file of await listFiles(root, 'applications', '.json', problems)) {
    const body = await readJsonFile(root, file, issues);
    if (body !== undefined)
      await attempt(file, issues, () =>
        engine.applications.put(baseName(file, '.json'), body as ApplicationBody),
      );
  }

  for (const file of await listFiles(root, 'triggers', '.json', problems)) {
    const body = await readJsonFile(root, file, issues);
    if (body !== undefined && definedOnce('trigger', named(body, file), file, defined, issues))
      await attempt(file, issues, () => keepTrigger(engine, named(body, file)));
  }

  // The access policy last: its rules name entities and their columns.
  if ((await stat(join(root, ACCESS_FILE)).catch(() => undefined))?.isFile()) {
    const body = await readJsonFile(root, ACCESS_FILE, issues);
    if (body !== undefined) await attempt(ACCESS_FILE, issues, () => engine.access.put(body as AccessPolicy));
  }

  if (engineOptions.spreadsheets === undefined) {
    const used = new Set<string>();
    for (const entity of entities) {
      const { spreadsheet_id: id, sheet_name: sheet } = entity.spreadsheet_config;
      used.add(`${id}/${sheet}`);
      if (!sheetFiles.has(`${id}/${sheet}`)) {
        // An entity without a seed file starts empty: its header row at the origin.
        const { row, col } = entity.spreadsheet_config.origin;
        const rows: CellValue[][] = Array.from({ length: row }, () => []);
        rows.push([...(Array(col).fill(null) as null[]), ...storedEntity(entity).columns.map((c) => c.name)]);
        if (inFiles) await createSheetFile(root, id, sheet, rows);
        else if (memorySheets.cells(id, sheet) === undefined) memorySheets.setSheet(id, sheet, rows);
      }
    }
    // Every sheet made before any is read: a computed column reads another entity's sheet.
    for (const entity of entities) {
      const { spreadsheet_id: id, sheet_name: sheet } = entity.spreadsheet_config;
      const read = await engine.catalog.getEntity({
        entity_name: entity.name,
        operation: {},
        page_size: engine.options.limits.maxPageSize,
      });
      const where = sheetFiles.get(`${id}/${sheet}`) ?? `entities/${entity.name}.json`;
      for (const message of read.body.error?.is_error ? (read.body.error.errors ?? []) : []) {
        // A cell of another entity (read by a computed column) is reported once, by that entity.
        const other = /of entity "([^"]*)"/.exec(message);
        if (other && other[1] !== entity.name && entities.some((e) => e.name === other[1])) continue;
        issues.push({ code: 'sheet_error', path: where, message: `entity "${entity.name}": ${message}` });
      }
    }
    for (const [key, file] of sheetFiles)
      if (!used.has(key))
        problems.push({ code: 'unused_sheet', path: file, message: 'no entity reads this sheet' });
  }

  if (issues.length > 0) {
    throw new ValidationError(
      issues,
      `The project in ${dir} has ${issues.length} problem${issues.length === 1 ? '' : 's'}:\n${issues.map((i) => `  ${formatIssue(i)}`).join('\n')}`,
    );
  }
  return { engine, spreadsheets, files, chat, problems, settings };
}

/** Engine options with the settings' `allowHosts` and `limits` under those given in code (which win). */
function withSettings(options: EngineOptions, settings: ProjectSettings): EngineOptions {
  const merged: EngineOptions = { ...options };
  if (settings.limits !== undefined) {
    const given = Object.entries(settings.limits).filter(([, value]) => value !== undefined);
    merged.limits = { ...(Object.fromEntries(given) as EngineLimits), ...options.limits };
  }
  if (settings.allowHosts !== undefined && options.security?.allowHosts === undefined)
    merged.security = { ...options.security, allowHosts: settings.allowHosts };
  return merged;
}

async function loadSheets(
  root: string,
  spreadsheets: MemorySpreadsheets,
  sheetFiles: Map<string, string>,
  issues: Issue[],
): Promise<void> {
  const base = join(root, 'sheets');
  if (!(await isDir(base))) return;
  for (const book of await entriesOf(base, 'directory')) {
    for (const sheet of (await entriesOf(join(base, book.name), 'file')).filter((e) =>
      e.name.endsWith('.csv'),
    )) {
      const file = `sheets/${book.name}/${sheet.name}`;
      try {
        const cells = parseCsv(await readFile(join(base, book.name, sheet.name), 'utf8'));
        const rows = cells.map((r) =>
          r.length === 1 && r[0] === '' ? [] : r.map((cell) => (cell === '' ? null : cell)),
        );
        spreadsheets.setSheet(book.name, baseName(sheet.name, '.csv'), rows);
        sheetFiles.set(`${book.name}/${baseName(sheet.name, '.csv')}`, file);
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        issues.push(...error.issues.map((issue) => ({ ...issue, path: `${file}: ${issue.path}` })));
      }
    }
  }
}

/** `dir/*.ext` as project-relative paths, sorted; other files become warnings. */
async function listFiles(root: string, folder: string, ext: string, problems: Issue[]): Promise<string[]> {
  if (!(await isDir(join(root, folder)))) return [];
  const out: string[] = [];
  const files = new Set((await entriesOf(join(root, folder), 'file')).map((entry) => entry.name));
  for (const entry of (await readdir(join(root, folder), { withFileTypes: true })).sort(byName)) {
    if (files.has(entry.name) && entry.name.endsWith(ext)) out.push(`${folder}/${entry.name}`);
    else if (!entry.name.startsWith('.'))
      problems.push({
        code: 'ignored',
        path: `${folder}/${entry.name}`,
        message: `ignored: only *${ext} files are read in ${folder}/`,
      });
  }
  return out;
}

/** Runs one registration and turns its errors into issues under the file. */
async function attempt(file: string, issues: Issue[], work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (error instanceof ValidationError) issues.push(...issuesUnder(error.issues, file, ': '));
    else if (isStepwireError(error)) issues.push({ code: error.code, path: file, message: error.message });
    else throw error;
  }
}

/**
 * Whether `body` is the first definition of its kind with its name in the project; a second one is
 * an issue naming both files (it would silently replace the first). `defined` maps `kind/name` to
 * the file that defined it.
 */
function definedOnce(
  kind: string,
  body: unknown,
  file: string,
  defined: Map<string, string>,
  issues: Issue[],
): boolean {
  const name = typeof body === 'object' && body !== null ? (body as { name?: unknown }).name : undefined;
  if (typeof name !== 'string') return true;
  const first = defined.get(`${kind}/${name}`);
  if (first === undefined) {
    defined.set(`${kind}/${name}`, file);
    return true;
  }
  issues.push({
    code: 'duplicate_name',
    path: file,
    message: `${kind} "${name}" is defined in ${first} already; each ${kind} is defined by one file`,
  });
  return false;
}

/** A body without `name` takes its file's name. */
function named(body: unknown, file: string): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || 'name' in body) return body;
  return { name: baseName(file, '.json'), ...body };
}

/** `code_file`s of transform steps that are not in scripts/. */
function missingScripts(body: unknown, scripts: Set<string>): { name: string; path: string }[] {
  const steps = (body as { steps?: unknown } | null)?.steps;
  if (!Array.isArray(steps)) return [];
  return steps.flatMap((step: unknown, i) => {
    const file = (step as { atlas_data?: { action?: unknown; input_data?: { code_file?: unknown } } } | null)
      ?.atlas_data;
    const name = file?.action === 'transform' ? file.input_data?.code_file : undefined;
    return typeof name === 'string' && name !== '' && !scripts.has(name)
      ? [{ name, path: `steps[${i}].atlas_data.input_data.code_file` }]
      : [];
  });
}

/**
 * The entities a workflow's steps name by a plain name (not a `{{reference}}`), with their paths: what
 * `get_entity` and `write_entity` steps read and write, and the input and output entities of `atlas`
 * steps.
 */
function unknownEntities(body: unknown): { name: string; path: string }[] {
  const steps = (body as { steps?: unknown } | null)?.steps;
  if (!Array.isArray(steps)) return [];
  const named: { name: string; path: string }[] = [];
  const add = (name: unknown, path: string) => {
    if (typeof name === 'string' && name !== '' && !name.includes('{{')) named.push({ name, path });
  };
  steps.forEach((step: unknown, i) => {
    const { l2_data: l2, atlas_data: atlas } = (step ?? {}) as {
      l2_data?: {
        provider?: unknown;
        module?: unknown;
        action?: unknown;
        input_data?: { entity_name?: unknown };
      };
      atlas_data?: { input_entities?: unknown; output_entities?: unknown };
    };
    if (l2?.provider === 'catalog' && l2.module === 'action' && typeof l2.action === 'string')
      if (['get_entity', 'write_entity'].includes(l2.action))
        add(l2.input_data?.entity_name, `steps[${i}].l2_data.input_data.entity_name`);
    for (const [list, key] of [
      [atlas?.input_entities, 'input_entities'],
      [atlas?.output_entities, 'output_entities'],
    ] as const) {
      if (!Array.isArray(list)) continue;
      list.forEach((entry: unknown, j) =>
        typeof entry === 'string'
          ? add(entry, `steps[${i}].atlas_data.${key}[${j}]`)
          : add((entry as { name?: unknown } | null)?.name, `steps[${i}].atlas_data.${key}[${j}].name`),
      );
    }
  });
  return named;
}

/**
 * The project's store, copying every file it stores into a local folder too. The store gets the
 * call's options (its idempotency key: exactly once); the copy is written again on a repeat.
 */
function mirror(
  files: FileStore,
  local: LocalFileStore,
  onWritten: ((path: string) => void) | undefined,
): FileStore {
  return {
    async put(file: FileInput, options?: CallOptions): Promise<StoredFile> {
      const stored = await files.put(file, options);
      const written = await local.put(file, options?.signal ? { signal: options.signal } : {});
      onWritten?.(fileURLToPath(written.url));
      return stored;
    },
    get: (url, options) => files.get?.(url, options),
  };
}

function baseName(file: string, ext: string): string {
  const name = file.slice(file.lastIndexOf('/') + 1);
  return name.endsWith(ext) ? name.slice(0, -ext.length) : name;
}

async function isDir(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

/**
 * The files (or folders) in `dir`, sorted by name; a symbolic link counts as what it points to, so a
 * project may link a definition or a sheet from elsewhere.
 */
async function entriesOf(dir: string, kind: 'file' | 'directory'): Promise<Dirent[]> {
  const out: Dirent[] = [];
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort(byName)) {
    const target = entry.isSymbolicLink() ? await stat(join(dir, entry.name)).catch(() => undefined) : entry;
    if (kind === 'file' ? target?.isFile() : target?.isDirectory()) out.push(entry);
  }
  return out;
}

/** Whether `name` names a file inside its folder, as `FileSpreadsheets` requires of sheet names. */
function isFileName(name: string): boolean {
  try {
    safeName(name, 'name');
    return true;
  } catch (error) {
    if (error instanceof ValidationError) return false;
    throw error;
  }
}

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * Gives an entity that has no sheet file one, holding its header row, so `sheets: "files"` can append
 * to it; a workbook (`<id>.xlsx`) is left alone (its sheet must be added in the workbook).
 */
async function createSheetFile(root: string, id: string, sheet: string, rows: CellValue[][]): Promise<void> {
  // A name that is not a plain file name ("../x", "a/b") creates nothing: the read that follows reports it.
  if (!isFileName(id) || !isFileName(sheet)) return;
  const base = join(root, 'sheets');
  if (await stat(join(base, `${id}.xlsx`)).catch(() => undefined)) return;
  const path = join(base, id, `${sheet}.csv`);
  if (await stat(path).catch(() => undefined)) return;
  await mkdir(join(base, id), { recursive: true });
  const text = writeCsvCells(rows, csvLayout(''));
  await replaceFile(path, new TextEncoder().encode(text));
}

/**
 * Creates a relationship of the folder, or keeps the one a database already holds when it is the
 * same; a different one under that name is a conflict the person must settle.
 */
async function keepRelationship(engine: Engine, body: unknown): Promise<void> {
  try {
    await engine.catalog.createRelationship(body as RelationshipBody);
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    const stored = (await engine.catalog.listRelationships()).find((r) => r.name === error.resourceName);
    const wanted = RelationshipSchema.parse(body);
    if (JSON.stringify(stored) === JSON.stringify(wanted)) return;
    throw new StepwireError(
      'conflict',
      `the database already holds a different relationship "${error.resourceName}"; relationships cannot be replaced, so give this one another name`,
      { cause: error },
    );
  }
}

/**
 * Creates a trigger of the folder, keeps the one a database already holds when it is the same, and
 * replaces it when the file changed (its schedule then counts from now).
 */
async function keepTrigger(engine: Engine, body: unknown): Promise<void> {
  const name = typeof body === 'object' && body !== null ? (body as { name?: unknown }).name : undefined;
  const stored =
    typeof name === 'string' ? await engine.triggers.get(name).catch(() => undefined) : undefined;
  if (stored) {
    const { created_at: _created, ...definition } = stored;
    const wanted = TriggerSchema.safeParse(body);
    if (wanted.success && JSON.stringify(definition) === JSON.stringify(wanted.data)) return;
    await engine.triggers.delete(stored.name);
  }
  await engine.triggers.create(body as TriggerBody);
}
