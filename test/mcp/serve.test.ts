// /mcp of a real `stepwire serve` process (its database, its durable runs executed by its worker),
// spoken to by the official SDK's client with an API key made by `stepwire keys create`.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { serveProcess, stepwire, tempDir } from '../cli/helpers.js';
import { appWithOpener, expectOpenerTools } from './helpers.js';

describe('/mcp of stepwire serve', () => {
  it('a key limited to one workflow lists and calls it there; durable runs answer their output', async () => {
    const temp = tempDir('mcp-serve');
    try {
      const project = appWithOpener(temp.dir);
      const made = await stepwire([
        'keys',
        'create',
        '--dir',
        project,
        '--name',
        'agent',
        '--roles',
        'opener',
      ]);
      expect(made.code, made.stderr).toBe(0);
      const served = await serveProcess([project, '--port', '0']);
      try {
        const client = new Client({ name: 'stepwire-test', version: '1' });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), {
            requestInit: { headers: { authorization: `Bearer ${made.stdout.trim()}` } },
          }),
        );
        try {
          await expectOpenerTools(client);
        } finally {
          await client.close();
        }
        expect(served.stderr()).toMatch(/POST \/mcp 200/);
      } finally {
        expect(await served.stop()).toBe(0);
      }
    } finally {
      temp.remove();
    }
  }, 120_000);
});
