import { cpSync, mkdtempSync, rmSync, writeFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { loadProject } from '../../src/node/index.js';

const temp = mkdtempSync(join(tmpdir(), 'stepwire-paths-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

async function served(name: string) {
  const dir = join(temp, name);
  cpSync('examples/app', dir, { recursive: true });
  // Served open on loopback: this test is not about sign-in (test/http/sign-in.test.ts is).
  rmSync(join(dir, 'access.json'));
  const project = await loadProject(dir, { sheets: 'files' });
  const handler = createHandler(project.engine);
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await handler(
      new Request(`http://localhost${path}`, {
        method,
        ...(body === undefined
          ? {}
          : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      }),
    );
    return { status: response.status, text: await response.text() };
  };
  return { dir, call };
}

describe('answers name files relative to the project folder, never by a server path', () => {
  it('a sheet file that cannot be read, on an entity read', async () => {
    const { dir, call } = await served('unreadable');
    writeFileSync(
      join(dir, 'sheets/shop/customers.csv'),
      new Uint8Array([0x69, 0x64, 0x0a, 0xff, 0xfe, 0x0a]),
    );
    const answer = await call('POST', '/catalog/entities/customers/read', { operation: {} });
    expect(answer.text).toContain('sheets/shop/customers.csv cannot be read as CSV');
    expect(answer.text).not.toContain(temp);
  });

  it('a sheet file removed under a running server, in the failed run record', async () => {
    const { dir, call } = await served('removed');
    unlinkSync(join(dir, 'sheets/shop/customers.csv'));
    const answer = await call('POST', '/workflows/add_customer/runs', {
      id: 900,
      name: 'Gone',
      city: 'Oslo',
    });
    expect(answer.text).toContain('sheets/shop/customers.csv');
    expect(answer.text).not.toContain(temp);
    const run = JSON.parse(answer.text) as { id: string; status: string };
    expect(run.status).toBe('failed');
    const stored = await call('GET', `/runs/${run.id}`);
    expect(stored.text).not.toContain(temp);
  });
});
