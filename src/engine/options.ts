import type { ChatAdapter, FileStore, SpreadsheetAdapter, StorageAdapter } from '../adapters/types.js';
import type { RunQueue } from '../adapters/queue.js';
import { MemoryChat, MemoryFileStore, MemorySpreadsheets, MemoryStorage } from '../adapters/memory/index.js';
import { MemoryMail } from '../adapters/memory/mail.js';
import type { MailAdapter } from '../adapters/mail/types.js';
import type { ActionDefinition } from '../actions/registry.js';
import type { ScriptSandbox } from '../script/index.js';
import { compileAllowHosts } from '../request/policy.js';
import type { AccessPolicy } from '../schema/access.js';
import { secretResolver, type SecretResolver, type SecretsOption } from './secrets.js';

/** Limits of the engine. Every field is optional; each default is documented in docs/security.md. */
export interface EngineLimits {
  /** Largest `page_size` of an entity read. @default 10000 */
  maxPageSize?: number;
  /** `page_size` of an entity read that gives none. @default 100 */
  defaultPageSize?: number;
  /** Most rows one step (or one `append` call) may write. @default 10000 */
  maxRowsPerWrite?: number;
  /** Time a transform script may run, in ms. @default 5000 */
  scriptTimeoutMs?: number;
  /** Memory a transform script may use, in bytes. @default 67108864 (64 MiB) */
  scriptMemoryBytes?: number;
  /** Stack a transform script may use, in bytes. @default 1048576 (1 MiB) */
  scriptStackBytes?: number;
  /** Size of what a script writes (as JSON), in bytes. @default 16777216 (16 MiB) */
  scriptOutputBytes?: number;
  /** Time a request step waits for response headers, in ms. @default 10000 */
  requestHeadersTimeoutMs?: number;
  /** Time a request step may take in all, in ms. @default 30000 */
  requestTimeoutMs?: number;
  /** Largest decoded response body of a request step, in bytes. @default 5242880 (5 MiB) */
  requestMaxResponseBytes?: number;
  /** Redirects a request step follows, each re-checked against the address policy. @default 5 */
  requestMaxRedirects?: number;
  /** Time a PDF render may take, in ms. @default 30000 */
  pdfTimeoutMs?: number;
  /** Largest PDF produced, in bytes. @default 10485760 (10 MiB) */
  pdfMaxBytes?: number;
  /** Largest file `upload_file` stores, in bytes. @default 10485760 (10 MiB) */
  uploadMaxBytes?: number;
  /** Time a run started through the API or `engine.run` may take, in ms. @default 300000 */
  runTimeoutMs?: number;
  /** Time a run started by an application form may take, in ms. @default 30000 */
  formRunTimeoutMs?: number;
  /** Independent steps of one run that may run at the same time. @default 4 */
  stepConcurrency?: number;
}

/** Security settings of the engine. */
export interface EngineSecurity {
  /**
   * Hosts request steps may reach even though they are loopback, private or link-local addresses:
   * a host name or IP, optionally with a port, each entry exact (`"api.internal"`, `"127.0.0.1:8080"`).
   * @default []
   */
  allowHosts?: readonly string[];
  /** Resolves a host name to its addresses so request steps can refuse names pointing at private addresses. */
  resolve?: (hostname: string) => Promise<string[]>;
}

/** Options of `new Engine()`. Every adapter is optional and defaults to its in-memory reference. */
export interface EngineOptions {
  /** Where definitions, scripts and run records are kept. @default new MemoryStorage() */
  storage?: StorageAdapter;
  /**
   * A durable run queue (e.g. `openPostgres(...).queue`, with its `storage`): runs are stored and their
   * steps execute, one job per step, in every process that calls `engine.work()`. Without it runs
   * execute in the process that starts them.
   */
  queue?: RunQueue;
  /** Where entity rows live. @default new MemorySpreadsheets() */
  spreadsheets?: SpreadsheetAdapter;
  /** File stores by provider name; `upload_file` steps name one. @default { memory: new MemoryFileStore() } */
  files?: Record<string, FileStore>;
  /** Where `send_message` posts. @default new MemoryChat() */
  chat?: ChatAdapter;
  /**
   * Where `send_email` sends: `MemoryMail` (keeps `messages`), `SmtpMail` (`stepwire/node`) or
   * `HttpMail` (a provider's HTTP API, runs on edge).
   * @default new MemoryMail()
   */
  mail?: MailAdapter;
  /** The fetch function request steps use. @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Extra `l2` actions to register. */
  actions?: readonly ActionDefinition[];
  /** Runs stored transform scripts. @default an in-process QuickJS sandbox */
  sandbox?: ScriptSandbox;
  /** Limits; see {@link EngineLimits}. */
  limits?: EngineLimits;
  /** Security settings; see {@link EngineSecurity}. */
  security?: EngineSecurity;
  /**
   * The access policy: with it, `engine.as(principal)` checks every call against it
   * and runs carry their initiator. Stored when the engine opens (replacing the stored one), and
   * changed later with `engine.access.put`. Without it, an engine whose storage holds a policy
   * enforces that one; with neither, nothing is checked (an embedded engine trusts its host).
   */
  access?: AccessPolicy;
  /**
   * Where `{{secrets.NAME}}` in a step's data comes from: a map of names to values, or a function
   * (sync or async) of the name, asked when a step that names the secret starts. A value is never
   * stored: run records, events and logs show it as `[secret NAME]` (docs/guides/secrets.md). A
   * secret that is not set fails the step (`missing_secret`). The CLI makes it from the environment
   * variables `STEPWIRE_SECRET_<NAME>`.
   * @default no secrets
   * @example
   * new Engine({ secrets: { API_KEY: process.env.API_KEY! } });
   * new Engine({ secrets: async (name) => (await vault.read(`stepwire/${name}`))?.value });
   */
  secrets?: SecretsOption;
  /**
   * The server's public origin (e.g. `https://ops.example.com`): links the engine makes itself, such
   * as an approval's link in its notification, start with it; without it they are paths.
   */
  publicUrl?: string;
}

/** Engine options with every default filled in. @internal */
export interface ResolvedOptions {
  storage: StorageAdapter;
  queue: RunQueue | undefined;
  spreadsheets: SpreadsheetAdapter;
  files: Record<string, FileStore>;
  chat: ChatAdapter;
  mail: MailAdapter;
  fetch: typeof fetch;
  limits: Required<EngineLimits>;
  security: { allowHosts: readonly string[]; resolve?: (hostname: string) => Promise<string[]> };
  secrets: SecretResolver;
  publicUrl: string | undefined;
}

/** The default limits. @internal */
export const DEFAULT_LIMITS: Required<EngineLimits> = {
  maxPageSize: 10_000,
  defaultPageSize: 100,
  maxRowsPerWrite: 10_000,
  scriptTimeoutMs: 5_000,
  scriptMemoryBytes: 64 * 1024 * 1024,
  scriptStackBytes: 1024 * 1024,
  scriptOutputBytes: 16 * 1024 * 1024,
  requestHeadersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  requestMaxResponseBytes: 5 * 1024 * 1024,
  requestMaxRedirects: 5,
  pdfTimeoutMs: 30_000,
  pdfMaxBytes: 10 * 1024 * 1024,
  uploadMaxBytes: 10 * 1024 * 1024,
  runTimeoutMs: 300_000,
  formRunTimeoutMs: 30_000,
  stepConcurrency: 4,
};

const OPTION_KEYS: readonly (keyof EngineOptions)[] = [
  'storage',
  'queue',
  'spreadsheets',
  'files',
  'chat',
  'mail',
  'fetch',
  'actions',
  'sandbox',
  'limits',
  'security',
  'access',
  'secrets',
  'publicUrl',
];
const SECURITY_KEYS: readonly (keyof EngineSecurity)[] = ['allowHosts', 'resolve'];

/** Throws a `TypeError` naming the first key of `object` not in `known`. */
function knownKeys(object: object, prefix: string, known: readonly string[]): void {
  for (const key of Object.keys(object))
    if (!known.includes(key))
      throw new TypeError(`${prefix}${key} is not a known option (known: ${known.join(', ')})`);
}

/** Fills in defaults and checks the shape of the options once. @internal */
export function resolveOptions(options: EngineOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null)
    throw new TypeError('Engine options must be an object');
  // A misspelled option would leave its default in force without a word (`securty` keeping
  // requests unchecked by address): every key must be one the engine reads.
  knownKeys(options, '', OPTION_KEYS);
  const limits = { ...DEFAULT_LIMITS };
  for (const [key, value] of Object.entries(options.limits ?? {})) {
    if (!Object.hasOwn(DEFAULT_LIMITS, key))
      throw new TypeError(
        `limits.${key} is not a known limit (known: ${Object.keys(DEFAULT_LIMITS).join(', ')})`,
      );
    if (value === undefined) continue;
    if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) {
      throw new TypeError(`limits.${key} must be a positive number, got ${String(value)}`);
    }
    (limits as Record<string, number>)[key] = value;
  }
  if (limits.defaultPageSize > limits.maxPageSize) limits.defaultPageSize = limits.maxPageSize;
  if (options.security !== undefined) {
    if (typeof options.security !== 'object' || options.security === null)
      throw new TypeError('security must be an object: { allowHosts?, resolve? }');
    knownKeys(options.security, 'security.', SECURITY_KEYS);
    const { resolve } = options.security;
    if (resolve !== undefined && typeof resolve !== 'function')
      throw new TypeError(
        'security.resolve must be a function from a host name to its addresses, e.g. nodeResolver from stepwire/node',
      );
  }
  const allowHosts = options.security?.allowHosts ?? [];
  if (!Array.isArray(allowHosts) || allowHosts.some((h) => typeof h !== 'string' || h === '')) {
    throw new TypeError('security.allowHosts must be an array of host names or IPs, optionally with a port');
  }
  // A malformed entry fails here, naming it, rather than at every request step.
  compileAllowHosts(allowHosts);
  for (const [name, adapter, method] of [
    ['storage', options.storage, 'get'],
    ['spreadsheets', options.spreadsheets, 'read'],
    ['chat', options.chat, 'send'],
    ['mail', options.mail, 'send'],
  ] as const) {
    if (
      adapter !== undefined &&
      typeof (adapter as unknown as Record<string, unknown>)[method] !== 'function'
    ) {
      throw new TypeError(`${name} must be an adapter with a ${method}() method`);
    }
  }
  const files = options.files ?? { memory: new MemoryFileStore() };
  for (const [name, store] of Object.entries(files)) {
    if (typeof store?.put !== 'function')
      throw new TypeError(`files.${name} must be a file store with a put() method`);
  }
  const fetchFn = options.fetch ?? globalThis.fetch?.bind(globalThis);
  const security: ResolvedOptions['security'] = { allowHosts: allowHosts.map((h) => h.toLowerCase()) };
  if (options.security?.resolve) security.resolve = options.security.resolve;
  const queue = options.queue;
  if (
    queue !== undefined &&
    (typeof queue !== 'object' || queue === null || typeof queue.begin !== 'function')
  )
    throw new TypeError('queue must be a run queue, e.g. openPostgres(...).queue');
  if (queue?.available && options.storage === undefined)
    throw new TypeError(
      'queue needs the storage on the same database: new Engine({ storage: db.storage, queue: db.queue })',
    );
  return {
    queue: queue?.available ? queue : undefined,
    storage: options.storage ?? new MemoryStorage(),
    spreadsheets: options.spreadsheets ?? new MemorySpreadsheets(),
    files,
    chat: options.chat ?? new MemoryChat(),
    mail: options.mail ?? new MemoryMail(),
    fetch: fetchFn,
    limits,
    security,
    secrets: secretResolver(options.secrets),
    publicUrl: publicUrlOf(options.publicUrl),
  };
}

/** The `publicUrl` option checked: an http(s) origin. @throws a `TypeError` naming it. */
function publicUrlOf(url: unknown): string | undefined {
  if (url === undefined) return undefined;
  let parsed: URL | undefined;
  try {
    parsed = typeof url === 'string' ? new URL(url) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
    throw new TypeError(
      `publicUrl must be an http(s) URL such as "https://ops.example.com", got ${String(url)}`,
    );
  return parsed.origin + parsed.pathname.replace(/\/+$/, '');
}
