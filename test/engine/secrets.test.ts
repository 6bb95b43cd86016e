import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Engine,
  MemoryStorage,
  UpstreamError,
  ValidationError,
  isStepwireError,
  request,
  workflow,
  type ActionContext,
  type ActionDefinition,
  type Collection,
  type PutOptions,
  type RunEvent,
  type RunRecord,
  type WorkflowInputBody,
} from '../../src/index.js';
import { openPostgres, type PostgresDatabase } from '../../src/adapters/postgres/index.js';
import { envSecrets } from '../../src/node/index.js';
import { runCli } from '../../src/cli/cli.js';
import type { CliIo } from '../../src/cli/io.js';
import { reachServer, testSchemas } from '../postgres/server.js';
import { tempDir } from '../cli/helpers.js';

/** The secret: `+`, `/` and `=` make its URL form differ from its text. */
const SECRET = 'sk_live_4711+ab/c=Q9';
const OTHER = 'tok_other_0815';
const SHOWN = '[secret API_KEY]';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

let server: Server;
let origin: string;
/** The Authorization header of every request the fake server received. */
const received: (string | undefined)[] = [];

beforeAll(async () => {
  trace.setGlobalTracerProvider(provider);
  server = createServer((req, res) => {
    received.push(req.headers.authorization);
    res.setHeader('content-type', 'application/json');
    // `/bad/...` says JSON but is not: the error quotes the URL and the start of the body.
    if (req.url!.startsWith('/bad/')) res.end(`not json: ${req.headers.authorization}`);
    else res.end(JSON.stringify({ auth: req.headers.authorization, url: req.url }));
  });
  // Idle connections stay open through the test: the durable cases open PGlite, whose start blocks this
  // process for seconds, after which the server's idle timer (5 s) and the client's reuse of the same
  // socket fire in one turn, and a reused socket the server has just closed resets the request.
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  trace.disable();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** A request step with the secret in its header, path and query; `path` `bad` makes the answer unreadable. */
function callWorkflow(path: 'echo' | 'bad' = 'echo', name = 'call'): WorkflowInputBody {
  return {
    name,
    steps: [
      {
        name: 'call',
        type: 'request',
        request_data: {
          url: `http://${origin}/${path}/{key}`,
          method: 'GET',
          path_params: { key: '{{secrets.API_KEY}}' },
          query_params: { k: '{{secrets.API_KEY}}' },
          headers: { Authorization: 'Bearer {{secrets.API_KEY}}' },
        },
      },
    ],
    wires: [],
    workflow_output: { name: 'output', output_data: { answer: '{{call.body}}' } },
  };
}

/** Logs, returns and (on its first attempt) throws what it was given. */
const leaky = {
  provider: 'platform',
  module: 'test',
  action: 'leaky',
  input: z.object({ token: z.string(), note: z.string() }),
  run: (input: { token: string; note: string }, context: ActionContext) => {
    context.log(`token is ${input.token}`);
    if (context.run.attempt === 1) throw new UpstreamError(`refused ${input.note}`, 503);
    return { echoed: input.token, note: input.note };
  },
} satisfies ActionDefinition;

const leakyWorkflow: WorkflowInputBody = {
  name: 'leaky',
  steps: [
    {
      name: 'use',
      type: 'l2',
      retry: { attempts: 2, backoff_ms: 1 },
      l2_data: {
        provider: 'platform',
        module: 'test',
        action: 'leaky',
        input_data: {
          token: '{{secrets.API_KEY}}',
          note: 'key={{secrets.API_KEY}}, other={{secrets.OTHER}}',
        },
      },
    },
    {
      name: 'after',
      type: 'l2',
      l2_data: {
        provider: 'platform',
        module: 'test',
        action: 'leaky',
        input_data: { token: '{{use.echoed}}', note: '{{use.note}}' },
      },
      retry: { attempts: 2, backoff_ms: 1 },
    },
  ],
  wires: [],
};

/** A MemoryStorage that keeps every value ever put, as the JSON text it stored. */
class RecordingStorage extends MemoryStorage {
  readonly written: string[] = [];
  override put(collection: Collection, key: string, value: unknown, options?: PutOptions): boolean {
    this.written.push(`${collection}/${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
    return super.put(collection, key, value, options);
  }
}

const COLLECTIONS: Collection[] = [
  'entities',
  'relationships',
  'workflows',
  'applications',
  'scripts',
  'runs',
  'run_keys',
  'triggers',
  'trigger_state',
  'form_submissions',
  'access',
  'audit',
  'definition_versions',
];

/** Every collection of a storage, every run summary and the audit log, as text. */
async function dumpStorage(storage: MemoryStorage): Promise<string> {
  const parts: string[] = [];
  for (const collection of COLLECTIONS) parts.push(JSON.stringify(await storage.list(collection)));
  parts.push(JSON.stringify(storage.listRuns({ limit: 1000 } as never)));
  return parts.join('\n');
}

/** Fails naming where the secret (or its URL form) shows in `text`. */
function expectNoSecret(text: string, what: string): void {
  for (const form of [SECRET, encodeURIComponent(SECRET), OTHER]) {
    const at = text.indexOf(form);
    expect(at, `${what} holds the secret: ...${text.slice(Math.max(0, at - 80), at + 80)}...`).toBe(-1);
  }
}

async function collect(handle: { events: AsyncIterable<RunEvent>; result: Promise<RunRecord> }) {
  const events: RunEvent[] = [];
  for await (const event of handle.events) events.push(event);
  return { events, record: await handle.result };
}

describe('secrets in a request step', () => {
  it('sends the value, keeps the {{secrets.NAME}} text in the definition and shows [secret NAME] in the record, events and output', async () => {
    const storage = new RecordingStorage();
    const engine = new Engine({
      storage,
      secrets: { API_KEY: SECRET },
      security: { allowHosts: [origin] },
    });
    await engine.workflows.create(callWorkflow());
    received.length = 0;
    const { events, record } = await collect(await engine.start('call', {}));
    expect(record.status, JSON.stringify(record.error)).toBe('succeeded');
    expect(received).toEqual([`Bearer ${SECRET}`]);
    const key = encodeURIComponent(SECRET);
    expect(record.steps[0]!.output).toMatchObject({
      status: 200,
      body: { auth: `Bearer ${SHOWN}`, url: `/echo/${SHOWN}?k=${SHOWN}` },
    });
    expect(key).not.toBe(SECRET);
    expect(record.output).toEqual({ answer: { auth: `Bearer ${SHOWN}`, url: `/echo/${SHOWN}?k=${SHOWN}` } });
    const definition = await engine.workflows.get('call');
    expect(JSON.stringify(definition)).toContain('Bearer {{secrets.API_KEY}}');
    expectNoSecret(JSON.stringify(record), 'the record');
    expectNoSecret(JSON.stringify(await engine.getRun(record.id)), 'the stored record');
    expectNoSecret(JSON.stringify(events), 'the events');
    expectNoSecret(storage.written.join('\n'), 'a value put in storage');
    expectNoSecret(await dumpStorage(storage), 'the storage');
    await engine.close();
  });

  it('shows [secret NAME] in an error that quotes the URL and the answer, in its events and spans', async () => {
    const engine = new Engine({
      secrets: async (name) => (name === 'API_KEY' ? SECRET : undefined),
      security: { allowHosts: [origin] },
    });
    await engine.workflows.create(callWorkflow('bad', 'bad'));
    exporter.reset();
    const { events, record } = await collect(await engine.start('bad', {}));
    expect(record.status).toBe('failed');
    const error = record.steps[0]!.error!;
    expect(error.code).toBe('upstream_error');
    expect(error.message).toContain(`/bad/${SHOWN}`);
    expect(error.message).toContain(`Bearer ${SHOWN}`);
    expectNoSecret(JSON.stringify(record), 'the record');
    expectNoSecret(JSON.stringify(events), 'the events');
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name)).toEqual(expect.arrayContaining(['step call', 'run bad']));
    expectNoSecret(
      JSON.stringify(
        spans.map((s) => ({ name: s.name, attributes: s.attributes, status: s.status, events: s.events })),
      ),
      'the spans',
    );
    await engine.close();
  });
});

describe('secrets in an l2 step', () => {
  it('gives the action the values and redacts its log lines, its retry error, its output and what later steps read', async () => {
    const storage = new RecordingStorage();
    const asked: string[] = [];
    const engine = new Engine({
      storage,
      actions: [leaky as unknown as ActionDefinition],
      secrets: async (name) => {
        asked.push(name);
        await new Promise((resolve) => setTimeout(resolve, 1));
        return { API_KEY: SECRET, OTHER }[name];
      },
    });
    await engine.workflows.create(leakyWorkflow);
    const { events, record } = await collect(await engine.start('leaky', {}));
    expect(record.status, JSON.stringify(record.error)).toBe('succeeded');
    // Asked per attempt, only by the step that names them.
    expect(asked).toEqual(['API_KEY', 'OTHER', 'API_KEY', 'OTHER']);
    const [use, after] = record.steps;
    expect(use!.output).toEqual({ echoed: SHOWN, note: `key=${SHOWN}, other=[secret OTHER]` });
    expect(use!.logs).toEqual([`token is ${SHOWN}`, `token is ${SHOWN}`]);
    expect(after!.output).toEqual(use!.output);
    const retrying = events.find((e) => e.type === 'step.retrying' && e.step === 'use');
    expect(retrying).toMatchObject({
      error: { code: 'upstream_error', message: `refused key=${SHOWN}, other=[secret OTHER]` },
    });
    expect(
      events.filter((e) => e.type === 'step.log' && e.step === 'use').map((e) => 'message' in e && e.message),
    ).toEqual([`token is ${SHOWN}`, `token is ${SHOWN}`]);
    expectNoSecret(JSON.stringify(record), 'the record');
    expectNoSecret(JSON.stringify(events), 'the events');
    expectNoSecret(storage.written.join('\n'), 'a value put in storage');
    expectNoSecret(await dumpStorage(storage), 'the storage');
    await engine.close();
  });

  it('fails the step naming a missing secret, without retrying it', async () => {
    const engine = new Engine({
      actions: [leaky as unknown as ActionDefinition],
      secrets: { API_KEY: SECRET },
    });
    await engine.workflows.create(leakyWorkflow);
    const record = await engine.run('leaky', {});
    expect(record.status).toBe('failed');
    expect(record.steps[0]).toMatchObject({
      name: 'use',
      status: 'failed',
      attempts: 1,
      error: {
        code: 'missing_secret',
        message: 'step "use" failed: secret "OTHER" is not set (STEPWIRE_SECRET_OTHER)',
      },
    });
    // Without the option, every secret is missing.
    const bare = new Engine({ actions: [leaky as unknown as ActionDefinition] });
    await bare.workflows.create(leakyWorkflow);
    expect((await bare.run('leaky', {})).steps[0]!.error).toMatchObject({
      code: 'missing_secret',
      message: 'step "use" failed: secret "API_KEY" is not set (STEPWIRE_SECRET_API_KEY)',
    });
    await engine.close();
    await bare.close();
  });

  it("refuses a secret's value in a child run's input, which the child's record would keep", async () => {
    const engine = new Engine({ secrets: { API_KEY: SECRET } });
    await engine.workflows.create({
      name: 'child',
      steps: [],
      wires: [],
      workflow_input: { name: 'input', input_schema: { type: 'object' } },
    });
    await engine.workflows.create({
      name: 'parent',
      steps: [
        {
          name: 'start',
          type: 'l2',
          l2_data: {
            provider: 'platform',
            module: 'workflows',
            action: 'run_workflow',
            input_data: { workflow_name: 'child', input: { key: '{{secrets.API_KEY}}' } },
          },
        },
      ],
      wires: [],
    });
    const record = await engine.run('parent', {});
    expect(record.steps[0]!.error?.code).toBe('secret_in_input');
    const runs = await engine.listRuns({});
    expect(runs.runs.map((r) => r.workflow)).toEqual(['parent']);
    await engine.close();
  });
});

describe('the secrets option and the reserved root', () => {
  it('checks the option once, naming what is wrong', () => {
    expect(() => new Engine({ secrets: 'x' as never })).toThrow(/secrets must be an object/);
    expect(() => new Engine({ secrets: { 'API-KEY': 'x' } })).toThrow(/secrets\.API-KEY/);
    expect(() => new Engine({ secrets: { API_KEY: 1 as never } })).toThrow(
      /secrets\.API_KEY must be a string/,
    );
    expect(() => new Engine({ secrets: { API_KEY: 'x' } })).not.toThrow();
  });

  it('refuses a step or an input named secrets, and a secret outside a step data or not one name', async () => {
    const engine = new Engine();
    const issuesOf = async (body: WorkflowInputBody) => {
      const error = await engine.workflows.create(body).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      return (error as ValidationError).issues.map((i) => `${i.path}: ${i.message}`);
    };
    const step = (name: string, input_data: Record<string, unknown>) => ({
      name,
      type: 'l2' as const,
      l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data },
    });
    expect(await issuesOf({ name: 'a', steps: [step('secrets', {})], wires: [] })).toEqual([
      expect.stringMatching(/^steps\[0\]\.name: "secrets" is reserved/),
    ]);
    expect(
      await issuesOf({
        name: 'b',
        steps: [],
        wires: [],
        workflow_input: { name: 'secrets', input_schema: { type: 'object' } },
      }),
    ).toEqual([expect.stringMatching(/^workflow_input\.name: "secrets" is reserved/)]);
    const shapes = await issuesOf({
      name: 'c',
      steps: [
        { ...step('s', { a: '{{secrets}}', b: '{{secrets.A.b}}', c: 'x {{secrets.1x}}' }) },
        {
          ...step('t', { ok: '{{secrets.OK}}' }),
          conditions: [{ data_path: '{{secrets.OK}}', value: 'x' }],
        },
      ],
      wires: [],
      workflow_output: { name: 'output', output_data: { leak: '{{secrets.OK}}' } },
    });
    expect(shapes).toEqual([
      expect.stringMatching(
        /^steps\[0\]\.l2_data\.input_data: reference \{\{secrets\}\} must name one secret/,
      ),
      expect.stringMatching(
        /^steps\[0\]\.l2_data\.input_data: reference \{\{secrets\.A\.b\}\} must name one secret/,
      ),
      expect.stringMatching(
        /^steps\[0\]\.l2_data\.input_data: reference \{\{secrets\.1x\}\} must name one secret/,
      ),
      expect.stringMatching(
        /^steps\[1\]\.conditions\[0\]\.data_path: .* a secret resolves only in a step's data/,
      ),
      expect.stringMatching(/^workflow_output\.output_data: .* a secret resolves only in a step's data/),
    ]);
    await engine.close();
  });

  it('lets a builder step name a secret', () => {
    const body = workflow('built')
      .step(
        'call',
        request({
          url: 'https://api.example.com/x',
          headers: { Authorization: 'Bearer {{secrets.API_KEY}}' },
        }),
      )
      .build();
    expect(JSON.stringify(body)).toContain('{{secrets.API_KEY}}');
  });
});

/** Every row of every table outside PostgreSQL's own schemas, as text, through `query`. */
async function dumpDatabase(query: (text: string) => Promise<Record<string, unknown>[]>, schemas?: string[]) {
  const tables = await query(
    `select table_schema, table_name from information_schema.tables
     where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`,
  );
  const parts: string[] = [];
  let count = 0;
  for (const { table_schema: schema, table_name: table } of tables as {
    table_schema: string;
    table_name: string;
  }[]) {
    if (schemas && !schemas.includes(schema)) continue;
    count += 1;
    const name = `"${schema.replaceAll('"', '""')}"."${table.replaceAll('"', '""')}"`;
    for (const row of await query(`select t::text as row from ${name} t`))
      parts.push(`${name}: ${String(row['row'])}`);
  }
  return { text: parts.join('\n'), tables: count };
}

/** Runs the request workflow and the l2 workflow durably (a queue and a worker), then dumps the database. */
async function durableRuns(db: PostgresDatabase) {
  const engine = new Engine({
    storage: db.storage,
    queue: db.queue,
    actions: [leaky as unknown as ActionDefinition],
    secrets: { API_KEY: SECRET, OTHER },
    security: { allowHosts: [origin] },
  });
  const worker = engine.work({ concurrency: 2, triggers: false });
  try {
    await engine.workflows.create(callWorkflow());
    await engine.workflows.create(callWorkflow('bad', 'bad'));
    await engine.workflows.create(leakyWorkflow);
    received.length = 0;
    const call = await collect(await engine.start('call', {}));
    expect(call.record.status, JSON.stringify(call.record.error)).toBe('succeeded');
    expect(received).toEqual([`Bearer ${SECRET}`]);
    expect(call.record.output).toEqual({
      answer: { auth: `Bearer ${SHOWN}`, url: `/echo/${SHOWN}?k=${SHOWN}` },
    });
    const bad = await collect(await engine.start('bad', {}));
    expect(bad.record.steps[0]!.error!.message).toContain(`Bearer ${SHOWN}`);
    const leaked = await collect(await engine.start('leaky', {}));
    expect(leaked.record.status, JSON.stringify(leaked.record.error)).toBe('succeeded');
    expect(leaked.record.steps[0]!.logs).toEqual([`token is ${SHOWN}`, `token is ${SHOWN}`]);
    for (const { events, record } of [call, bad, leaked]) {
      expectNoSecret(JSON.stringify(events), 'the events');
      expectNoSecret(JSON.stringify(record), 'the record');
    }
  } finally {
    await worker.stop();
    await engine.close();
  }
}

const url = await reachServer();

describe('no stored byte holds a secret on PostgreSQL, with a queue and a worker', () => {
  it("on PGlite: every table of every schema, the queue's jobs included", async () => {
    const pglite = new PGlite();
    const db = await openPostgres({ pglite });
    try {
      await durableRuns(db);
      const { text, tables } = await dumpDatabase(
        async (sql) => (await pglite.query<Record<string, unknown>>(sql)).rows,
      );
      expect(tables).toBeGreaterThan(5);
      expect(text).toContain('{{secrets.API_KEY}}');
      expect(text).toContain(SHOWN);
      expect(text).toMatch(/"step_jobs": /);
      expectNoSecret(text, 'the database');
    } finally {
      await db.close();
      await pglite.close().catch(() => undefined);
    }
  }, 60_000);

  it.skipIf(url === undefined)(
    'on a PostgreSQL server: every table of its schema',
    async () => {
      const schemas = testSchemas(url);
      const schema = schemas.next();
      const db = await openPostgres(url!, { schema });
      const client = new pg.Client(url);
      await client.connect();
      try {
        await durableRuns(db);
        const { text, tables } = await dumpDatabase(
          async (sql) => (await client.query<Record<string, unknown>>(sql)).rows,
          [schema],
        );
        expect(tables).toBeGreaterThan(5);
        expect(text).toContain(SHOWN);
        expectNoSecret(text, 'the database');
      } finally {
        await client.end();
        await db.close();
        await schemas.drop();
      }
    },
    60_000,
  );
});

describe('the CLI', () => {
  it('reads STEPWIRE_SECRET_<NAME> from the environment', () => {
    const secrets = envSecrets({ STEPWIRE_SECRET_API_KEY: SECRET, API_KEY: 'not this' });
    expect(secrets('API_KEY')).toBe(SECRET);
    expect(secrets('OTHER')).toBeUndefined();
  });

  it('stepwire run sends the secret from the environment and prints only [secret NAME]', async () => {
    const { dir, remove } = tempDir('secrets');
    mkdirSync(join(dir, 'workflows'));
    writeFileSync(join(dir, 'workflows', 'call.json'), JSON.stringify(callWorkflow()));
    writeFileSync(join(dir, 'stepwire.json'), JSON.stringify({ allowHosts: [origin] }));
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), stopped: () => Promise.resolve() };
    process.env['STEPWIRE_SECRET_API_KEY'] = SECRET;
    received.length = 0;
    try {
      const code = await runCli(['run', dir, 'call'], io);
      expect(code, err.join('\n')).toBe(0);
      expect(received).toEqual([`Bearer ${SECRET}`]);
      expect(out.join('\n')).toContain(`Bearer ${SHOWN}`);
      expectNoSecret(out.join('\n') + err.join('\n'), 'the output of stepwire run');
      delete process.env['STEPWIRE_SECRET_API_KEY'];
      err.length = 0;
      expect(await runCli(['run', dir, 'call'], io)).toBe(1);
      expect(err.join('\n')).toContain('secret "API_KEY" is not set (STEPWIRE_SECRET_API_KEY)');
    } finally {
      delete process.env['STEPWIRE_SECRET_API_KEY'];
      remove();
    }
  }, 30_000);
});

describe('guards', () => {
  it('a missing secret is a stepwire error', async () => {
    const { MissingSecretError } = await import('../../src/index.js');
    const error = new MissingSecretError('API_KEY');
    expect(isStepwireError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'missing_secret', secret: 'API_KEY' });
  });
});
