/**
 * `pattern` and `patternProperties` run in linear time (re2js), and a pattern the linear-time engine
 * cannot run is refused when the workflow is stored, naming its path and why.
 *
 * The hostile values go to a child process (fixtures/hostile-pattern.ts) killed at a deadline: on a
 * backtracking engine `^(a+)+$` against 40 `a`s and a `b` blocks for hours, which no in-process
 * timeout could stop.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Engine, type Workflow } from '../../src/index.js';
import { createHandler } from '../../src/http/index.js';
import { compileSchema } from '../../src/json-schema/index.js';
import { MAX_PATTERN_INSTRUCTIONS, MAX_SCHEMA_PATTERNS } from '../../src/json-schema/pattern.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURE = join(ROOT, 'test', 'json-schema', 'fixtures', 'hostile-pattern.ts');
/** Time for the child to start (tsx) and answer; its own timings are what is asserted. */
const DEADLINE_MS = 25_000;

/** Runs the fixture in `mode`; its printed JSON, or a failure saying it was killed at the deadline. */
function runFixture(mode: 'engine' | 'http'): Promise<any> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, mode], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), DEADLINE_MS);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (signal === 'SIGKILL') reject(new Error(`the ${mode} run blocked: killed after ${DEADLINE_MS} ms`));
      else if (code !== 0) reject(new Error(`the ${mode} run failed (${code}): ${stderr}`));
      else resolve(JSON.parse(stdout));
    });
  });
}

function workflowWith(inputSchema: Record<string, unknown>): Workflow {
  return {
    name: 'patterns',
    steps: [
      {
        name: 'echo',
        type: 'l2',
        l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: { ok: true } },
      },
    ],
    wires: [],
    workflow_input: { name: 'input', input_schema: inputSchema },
    workflow_output: { name: 'output', output_data: '{{echo}}' },
  };
}

async function createError(inputSchema: Record<string, unknown>): Promise<any> {
  const engine = new Engine();
  return engine.workflows.create(workflowWith(inputSchema)).then(
    () => expect.unreachable('the workflow was stored'),
    (error: unknown) => error,
  );
}

describe('a pattern with nested quantifiers against a hostile value', () => {
  it('fails validation through engine.run in under 2 s (pattern and patternProperties)', async () => {
    const result = await runFixture('engine');
    expect(result.pattern).toMatchObject({
      name: 'ValidationError',
      issues: [{ code: 'invalid_format', path: 'name' }],
    });
    expect(result.patternProperties).toMatchObject({
      name: 'ValidationError',
      issues: [{ code: 'invalid_type', path: `tags.${'a'.repeat(40)}b` }],
    });
    expect(result.pattern.ms).toBeLessThan(2000);
    expect(result.patternProperties.ms).toBeLessThan(2000);
  });

  it('is answered 400 by the HTTP handler in under 2 s, and a request sent with it in under 1 s', async () => {
    const { hostile, other } = await runFixture('http');
    expect(hostile.status).toBe(400);
    expect(hostile.body.errors).toEqual([expect.objectContaining({ path: 'name', code: 'invalid_format' })]);
    expect(hostile.ms).toBeLessThan(2000);
    expect(other.status).toBe(200);
    expect(other.ms).toBeLessThan(1000);
  });
});

describe('patterns the linear-time engine cannot run are refused when the workflow is stored', () => {
  it('names the path of a backreference and says why', async () => {
    const error = await createError({
      type: 'object',
      properties: { x: { type: 'string', pattern: '^(a)\\1$' } },
    });
    expect(error.name).toBe('ValidationError');
    expect(error.issues).toEqual([
      {
        code: 'unsupported_pattern',
        path: 'workflow_input.input_schema.properties.x.pattern',
        message:
          '"pattern" uses the backreference "\\1", which stepwire does not run: patterns run in linear time (RE2 syntax)',
      },
    ]);
  });

  it('names a patternProperties key, and every refused pattern at once', async () => {
    const error = await createError({
      type: 'object',
      patternProperties: { '^(?<w>a)\\k<w>$': { type: 'string' }, '^ok$': { type: 'string' } },
      properties: {
        ahead: { type: 'string', pattern: 'a(?=b)' },
        behind: { type: 'string', pattern: '(?<!a)b' },
        property: { type: 'string', pattern: '\\p{Script=Grek}' },
        extensions: { type: 'string', pattern: '\\p{scx=Greek}' },
        repeats: { type: 'string', pattern: '^(?:a{100}){20}$' },
      },
    });
    expect(error.issues.map((issue: any) => [issue.path, issue.message])).toEqual([
      [
        'workflow_input.input_schema.properties.ahead.pattern',
        expect.stringContaining('uses the lookahead "(?="'),
      ],
      [
        'workflow_input.input_schema.properties.behind.pattern',
        expect.stringContaining('uses the lookbehind "(?<!"'),
      ],
      [
        'workflow_input.input_schema.properties.property.pattern',
        expect.stringContaining('uses the Unicode property "\\p{Script=Grek}"'),
      ],
      [
        'workflow_input.input_schema.properties.extensions.pattern',
        expect.stringContaining('"\\p{scx=Greek}" (Script_Extensions)'),
      ],
      [
        'workflow_input.input_schema.properties.repeats.pattern',
        expect.stringContaining('repeats a part more than 1000 times'),
      ],
      [
        'workflow_input.input_schema.patternProperties.^(?<w>a)\\k<w>$',
        'uses the backreference "\\k<w>", which stepwire does not run: patterns run in linear time (RE2 syntax)',
      ],
    ]);
  });

  it('answers 400 over HTTP with the path', async () => {
    const handler = createHandler(new Engine());
    const response = await handler(
      new Request('http://localhost/workflows', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(workflowWith({ type: 'object', properties: { x: { pattern: '(a)\\1' } } })),
      }),
    );
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errors: { path: string; code: string; message: string }[] };
    expect(body.errors).toEqual([
      expect.objectContaining({
        code: 'unsupported_pattern',
        path: 'workflow_input.input_schema.properties.x.pattern',
        message: expect.stringContaining('backreference'),
      }),
    ]);
  });

  it('refuses a pattern too large to run cheaply, before compiling one far too large', async () => {
    const large = `^${'[a-z]{0,900}'.repeat(3)}$`;
    const error = await createError({ type: 'object', properties: { x: { pattern: large } } });
    expect(error.issues).toEqual([
      expect.objectContaining({
        code: 'pattern_too_large',
        path: 'workflow_input.input_schema.properties.x.pattern',
        message: expect.stringMatching(
          new RegExp(`compiles to \\d+ RE2 instructions, more than the ${MAX_PATTERN_INSTRUCTIONS}`),
        ),
      }),
    ]);
    // 200,000 instructions by estimate: refused without handing it to RE2.
    const start = performance.now();
    const huge = await createError({
      type: 'object',
      properties: { x: { pattern: `^${'[ab]{0,1000}'.repeat(100)}$` } },
    });
    expect(huge.issues[0]).toMatchObject({ code: 'pattern_too_large' });
    expect(huge.issues[0].message).toMatch(/compiles to about \d+ RE2 instructions/);
    expect(performance.now() - start).toBeLessThan(1000);
  });

  it('bounds the patterns of one schema: how many, and their instructions together', () => {
    const many: Record<string, unknown> = {};
    for (let i = 0; i <= MAX_SCHEMA_PATTERNS; i += 1) many[`p${i}`] = { pattern: `^v${i}$` };
    expect(() => compileSchema({ properties: many })).toThrow(/at most 500 different patterns/);
    // The same pattern written many times counts once.
    const same: Record<string, unknown> = {};
    for (let i = 0; i < 2 * MAX_SCHEMA_PATTERNS; i += 1) same[`p${i}`] = { pattern: '^[a-z]+$' };
    expect(() => compileSchema({ properties: same })).not.toThrow();
    const heavy: Record<string, unknown> = {};
    for (let i = 0; i < 6; i += 1) heavy[`p${i}`] = { pattern: `^${i}[a-z]{0,900}[0-9]{0,900}$` };
    expect(() => compileSchema({ properties: heavy })).toThrow(/past 20000 RE2 instructions together/);
  });
});

describe('the cost of a pattern test', () => {
  it('is paid from the validation budget: a huge string against a large pattern is too complex', () => {
    const schema = compileSchema({ type: 'array', items: { type: 'string', pattern: '^[a-z]{0,1000}$' } });
    const start = performance.now();
    // 20 strings of 1,000 characters against 2,000 instructions: 40,000,000 steps at most.
    const issues = schema.validate(Array.from({ length: 20 }, () => 'a'.repeat(1000)));
    expect(issues).toEqual([expect.objectContaining({ code: 'too_complex', path: '' })]);
    expect(performance.now() - start).toBeLessThan(5000);
    expect(schema.validate(['a'.repeat(1000)])).toEqual([]);
  });

  it('grows linearly with the text: 1,000,000 characters against ^(a+)+$ take well under a second', () => {
    const schema = compileSchema({ type: 'string', pattern: '^(a+)+$' });
    const start = performance.now();
    expect(schema.validate(`${'a'.repeat(1_000_000)}b`)).toEqual([
      expect.objectContaining({ code: 'invalid_format' }),
    ]);
    expect(schema.validate('a'.repeat(1_000_000))).toEqual([]);
    expect(performance.now() - start).toBeLessThan(3000);
  });
});
