import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { loadProject } from '../../src/node/index.js';
import { inProcess, tempDir } from './helpers.js';

const temp = tempDir('init');
afterAll(() => temp.remove());

describe('stepwire init', () => {
  it('writes a project that validates, runs as a dry run and serves its screen', async () => {
    const dir = join(temp.dir, 'new-project');
    const init = await inProcess(['init', dir]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain('stepwire validate');
    expect(init.stdout).toContain('sheets/book/contacts.csv');

    const validate = await inProcess(['validate', dir]);
    expect(validate.code, `${validate.stdout}\n${validate.stderr}`).toBe(0);
    expect(validate.stdout).toContain('Steps run in this order');
    expect(validate.stdout).toContain('  add_contact: save');

    const sheet = readFileSync(join(dir, 'sheets/book/contacts.csv'), 'utf8');
    const run = await inProcess([
      'run',
      dir,
      'add_contact',
      '--input',
      '{"id":2,"name":"Grace Hopper"}',
      '--out',
      join(temp.dir, 'out'),
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ id: 2, written: 1 });
    expect(readFileSync(join(dir, 'sheets/book/contacts.csv'), 'utf8')).toBe(sheet);

    const project = await loadProject(dir);
    const screen = await createHandler(project.engine)(
      new Request('http://localhost/applications/contacts/screens/start'),
    );
    expect(screen.status).toBe(200);
    expect(await screen.text()).toContain('Ada Lovelace');
  });

  it('refuses a folder that is not empty, and writes nothing', async () => {
    const dir = join(temp.dir, 'taken');
    expect((await inProcess(['init', dir])).code).toBe(0);
    const again = await inProcess(['init', dir]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^stepwire init: .*taken is not empty/);
  });
});

describe('mistyped commands and options', () => {
  it('an unknown command suggests the nearest one', async () => {
    const result = await inProcess(['serv', 'examples/invoices']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^stepwire: unknown command "serv"; did you mean "serve"\?/);
    const far = await inProcess(['frobnicate']);
    expect(far.stderr).toMatch(/^stepwire: unknown command "frobnicate"\n/);
  });

  it('an unknown option suggests the nearest one of that command', async () => {
    const result = await inProcess(['run', 'examples/invoices', 'invoice', '--inptu', '{}']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^stepwire run: Unknown option '--inptu'; did you mean --input\?/);
  });
});
