import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/index.js';
import { loadProject, readProjectSettings } from '../../src/node/index.js';
import { inProcess } from '../cli/helpers.js';

const temp = mkdtempSync(join(tmpdir(), 'stepwire-settings-'));
let server: Server;
let host: string;
beforeAll(async () => {
  server = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ ok: true }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(temp, { recursive: true, force: true });
});

let count = 0;
/** A project folder with one workflow that calls the local server, and the given stepwire.json text. */
function project(settings?: string): string {
  const dir = join(temp, `p${++count}`);
  mkdirSync(join(dir, 'workflows'), { recursive: true });
  writeFileSync(
    join(dir, 'workflows', 'ping.json'),
    JSON.stringify({
      name: 'ping',
      steps: [{ name: 'call', type: 'request', request_data: { url: `http://${host}/ping`, method: 'GET' } }],
      wires: [],
      workflow_output: { name: 'output', output_data: { ok: '{{call.body.ok}}' } },
    }),
  );
  if (settings !== undefined) writeFileSync(join(dir, 'stepwire.json'), settings);
  return dir;
}

describe('stepwire.json, the settings of a project folder', () => {
  it('allowHosts lets request steps reach a local service, which is refused without it', async () => {
    const refused = await loadProject(project());
    const denied = await refused.engine.run('ping', {});
    expect(denied.status).toBe('failed');
    expect(denied.error?.message).toMatch(/127\.0\.0\.1/);

    const allowed = await loadProject(
      project(JSON.stringify({ $schema: '../schemas/project-settings.json', allowHosts: [host] })),
    );
    expect(allowed.settings.allowHosts).toEqual([host]);
    const run = await allowed.engine.run('ping', {});
    expect(run.status, run.error?.message).toBe('succeeded');
    expect(run.output).toEqual({ ok: true });
  });

  it('limits set the engine limits, and options given in code win over the file', async () => {
    const dir = project(JSON.stringify({ limits: { maxPageSize: 50, scriptTimeoutMs: 1234 } }));
    const loaded = await loadProject(dir);
    expect(loaded.engine.options.limits.maxPageSize).toBe(50);
    expect(loaded.engine.options.limits.scriptTimeoutMs).toBe(1234);
    const coded = await loadProject(dir, { engineOptions: { limits: { maxPageSize: 70 } } });
    expect(coded.engine.options.limits.maxPageSize).toBe(70);
    expect(coded.engine.options.limits.scriptTimeoutMs).toBe(1234);
  });

  it('publicUrl comes back without its trailing slash', async () => {
    expect(
      await readProjectSettings(project(JSON.stringify({ publicUrl: 'https://flows.example.test/' }))),
    ).toEqual({ publicUrl: 'https://flows.example.test' });
    expect(await readProjectSettings(project())).toEqual({});
  });

  it('refuses every mistake of the file, each named by stepwire.json and its path, and loads nothing', async () => {
    const dir = project(
      JSON.stringify({
        allowhosts: ['x'],
        allowHosts: ['api.example.com', 'not a host'],
        limits: { maxPageSize: -1, maxPageSzie: 10 },
        publicUrl: 'ftp://flows.example.test',
      }),
    );
    const error = await loadProject(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    const paths = (error as ValidationError).issues.map((issue) => issue.path).sort();
    expect(paths).toEqual([
      'stepwire.json: allowHosts[1]',
      'stepwire.json: allowhosts',
      'stepwire.json: limits.maxPageSize',
      'stepwire.json: limits.maxPageSzie',
      'stepwire.json: publicUrl',
    ]);
    const broken = await readProjectSettings(project('{ "allowHosts": [ }')).catch((e: unknown) => e);
    expect((broken as ValidationError).issues).toEqual([
      expect.objectContaining({
        code: 'invalid_json',
        path: 'stepwire.json',
        message: expect.stringMatching(/line 1, column 19/),
      }),
    ]);
  });

  it('stepwire validate reports a bad stepwire.json and exits 1', async () => {
    const result = await inProcess([
      'validate',
      project(JSON.stringify({ limits: { maxPageSize: 'many' } })),
    ]);
    expect(result.code).toBe(1);
    expect(`${result.stdout}\n${result.stderr}`).toContain('stepwire.json: limits.maxPageSize');
  });
});
