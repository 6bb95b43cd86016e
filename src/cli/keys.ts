/**
 * `stepwire keys create|list|revoke`: the API keys of a project's database, and what
 * `stepwire users` shares with it: opening the database and the engine's credential stores.
 * @module
 */
import type { ApiKey, ApiKeys } from '../auth/keys.js';
import type { Sessions } from '../auth/sessions.js';
import type { Users } from '../auth/users.js';
import type { AuditRecord } from '../adapters/types.js';
import { Engine } from '../engine/engine.js';
import { EXIT, UsageError, parseCommand, requireFolder, type CliIo, type OptionSpec } from './io.js';
import { openDatabase } from './database.js';

/** Options every `keys` and `users` subcommand takes: where the database is. @internal */
export const DATABASE_OPTIONS: OptionSpec = {
  db: { type: 'string' },
  schema: { type: 'string' },
  dir: { type: 'string', short: 'd' },
};

/** The lines of help on `--db`, `--schema` and `--dir`. @internal */
export const DATABASE_HELP = `      --db URL|DIR   the database: a postgres:// URL or a folder (embedded PGlite);
                     default: <dir>/.stepwire/db, the one "stepwire serve <dir>" uses
      --schema NAME  the Postgres schema of the project's tables (default: stepwire)
  -d, --dir DIR      the project folder whose database to use (default: .)
  -h, --help         show this help`;

const HELP = `Usage: stepwire keys create --name NAME --roles ROLE,... [--expires ISO] [--db URL|DIR]
       stepwire keys list [--json] [--db URL|DIR]
       stepwire keys revoke <id> [--db URL|DIR]

API keys let programs call the HTTP API with "Authorization: Bearer <secret>". create
prints the secret once on standard output: it is stored only as a hash and cannot be
shown again. list shows every key (never a secret); revoke stops a key at once.

Options:
      --name NAME    what the key is for, e.g. "nightly import" (create)
      --roles LIST   the access policy's roles it holds, comma-separated (create)
      --expires ISO  when it stops working, e.g. 2030-01-31T00:00:00Z (create; default never)
      --json         print the list as JSON (list)
${DATABASE_HELP}

Exit codes: 0 ok, 1 failure (invalid input, no such key), 2 usage error.`;

/** Who the audit log names for a change made from the command line. */
const CLI_PRINCIPAL = { id: 'cli', kind: 'service' } as const;

/** The engine's credential stores on an opened database, and its audit log. @internal */
export interface CredentialStores {
  keys: ApiKeys;
  users: Users;
  sessions: Sessions;
  /** Appends an entry as the command line (principal `cli`, a service). */
  audit(entry: Omit<AuditRecord, 'principal' | 'outcome'>): Promise<void>;
}

/**
 * Opens the database `--db` names (else `<--dir>/.stepwire/db`), runs `use` with the engine's
 * credential stores, and closes it.
 * @internal
 */
export async function withCredentialStores<T>(
  command: string,
  values: Record<string, string | boolean | undefined>,
  use: (stores: CredentialStores) => Promise<T>,
): Promise<T> {
  const dir = (values['dir'] as string | undefined) ?? '.';
  const db = values['db'] as string | undefined;
  if (values['schema'] !== undefined && db === undefined)
    throw new UsageError('--schema names a schema of the database --db gives; give --db too', command);
  if (db === undefined) await requireFolder(dir);
  const database = await openDatabase(dir, db, 'project', values['schema'] as string | undefined);
  try {
    const engine = new Engine({
      ...(database.storage ? { storage: database.storage } : {}),
      ...(database.queue ? { queue: database.queue } : {}),
    });
    return await use({
      keys: engine.keys,
      users: engine.users,
      sessions: engine.sessions,
      audit: async (entry) => {
        await engine.audit.record({ ...entry, principal: CLI_PRINCIPAL, outcome: 'success' });
      },
    });
  } finally {
    await database.close();
  }
}

/** `a,b , c` as `['a', 'b', 'c']`. @internal */
export function parseRoles(value: string | boolean | undefined, command: string): string[] {
  if (typeof value !== 'string')
    throw new UsageError('--roles is required, e.g. --roles admin,sales', command);
  return value
    .split(',')
    .map((role) => role.trim())
    .filter((role) => role !== '');
}

/**
 * Runs a subcommand's work; a usage error is printed with this command's help (exit code 2).
 * @internal
 */
export async function withUsage(
  io: CliIo,
  command: string,
  help: string,
  work: () => Promise<number>,
): Promise<number> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`stepwire ${command}: ${error.message}`);
    io.err('');
    io.err(help);
    return EXIT.usage;
  }
}

/**
 * `stepwire keys create|list|revoke`.
 * @internal
 */
export async function keysCommand(args: string[], io: CliIo): Promise<number> {
  return withUsage(io, 'keys', HELP, async () => {
    const [sub, ...rest] = args;
    if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help')
      return sub === undefined
        ? usage('missing subcommand: create, list or revoke')
        : (io.out(HELP), EXIT.ok);
    if (sub === 'create') return create(rest, io);
    if (sub === 'list') return list(rest, io);
    if (sub === 'revoke') return revoke(rest, io);
    return usage(`unknown subcommand "${sub}": create, list or revoke`);
  });
}

async function create(args: string[], io: CliIo): Promise<number> {
  const { values, help } = parseCommand(
    'keys',
    args,
    { ...DATABASE_OPTIONS, name: { type: 'string' }, roles: { type: 'string' }, expires: { type: 'string' } },
    { min: 0, max: 0 },
  );
  if (help) return (io.out(HELP), EXIT.ok);
  if (typeof values['name'] !== 'string') return usage('--name is required, e.g. --name "nightly import"');
  const roles = parseRoles(values['roles'], 'keys');
  const expires = values['expires'] as string | undefined;
  return withCredentialStores('keys', values, async ({ keys, audit }) => {
    const key = await keys.create({
      name: values['name'] as string,
      roles,
      ...(expires === undefined ? {} : { expires_at: expires }),
    });
    await audit({
      action: 'key.create',
      resource: `key:${key.id}`,
      detail: { name: key.name, roles: key.roles, expires_at: key.expires_at },
    });
    io.err(
      `created key ${key.id} "${key.name}", ${describeRoles(key.roles)}, expires ${key.expires_at ?? 'never'}`,
    );
    io.err('The secret follows. It is shown this once and cannot be shown again: store it now.');
    io.out(key.secret);
    return EXIT.ok;
  });
}

async function list(args: string[], io: CliIo): Promise<number> {
  const { values, help } = parseCommand(
    'keys',
    args,
    { ...DATABASE_OPTIONS, json: { type: 'boolean' } },
    { min: 0, max: 0 },
  );
  if (help) return (io.out(HELP), EXIT.ok);
  return withCredentialStores('keys', values, async ({ keys }) => {
    const all = await keys.list();
    if (values['json'] === true) io.out(JSON.stringify(all, null, 2));
    else if (all.length === 0)
      io.out('no API keys (make one with: stepwire keys create --name NAME --roles ROLES)');
    else for (const key of all) io.out(describeKey(key));
    return EXIT.ok;
  });
}

async function revoke(args: string[], io: CliIo): Promise<number> {
  const { values, positionals, help } = parseCommand('keys', args, DATABASE_OPTIONS, { min: 1, max: 1 });
  if (help) return (io.out(HELP), EXIT.ok);
  const id = positionals[0]!;
  return withCredentialStores('keys', values, async ({ keys, audit }) => {
    if (!(await keys.revoke(id))) {
      io.err(`stepwire keys: no key "${id}" that works (see stepwire keys list)`);
      return EXIT.failure;
    }
    await audit({ action: 'key.revoke', resource: `key:${id}` });
    io.out(`revoked key ${id}`);
    return EXIT.ok;
  });
}

function usage(message: string): never {
  throw new UsageError(message, 'keys');
}

/** One line per key: id, name, roles, expiry, last use, and whether it is revoked. */
function describeKey(key: ApiKey): string {
  const state = key.revoked_at
    ? `revoked ${key.revoked_at}`
    : key.expires_at && Date.parse(key.expires_at) <= Date.now()
      ? `expired ${key.expires_at}`
      : `expires ${key.expires_at ?? 'never'}`;
  return `${key.id}  "${key.name}"  ${describeRoles(key.roles)}  ${state}  last used ${key.last_used_at ?? 'never'}`;
}

/** `roles a, b`, or `no roles`. @internal */
export function describeRoles(roles: readonly string[]): string {
  return roles.length === 0 ? 'no roles' : `roles ${roles.join(', ')}`;
}
