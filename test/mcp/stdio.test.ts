// `stepwire mcp <dir>` as an MCP client starts it: a real process of the CLI, spoken to over its
// standard input and output by the official SDK's client.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, inProcess, stepwire, tempDir } from '../cli/helpers.js';
import { appWithOpener, expectOpenerTools, expectServiceTools } from './helpers.js';

/** A client connected to `stepwire mcp <args>`, and what the process wrote to standard error. */
async function connect(args: string[], env: Record<string, string> = {}) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'mcp', ...args],
    cwd: ROOT,
    env: { ...(process.env as Record<string, string>), NO_COLOR: '1', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'stepwire-test', version: '1' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

describe('stepwire mcp <dir> over standard input and output', () => {
  it('as the project service: every workflow a tool, calls answer outputs, invalid arguments run nothing', async () => {
    const { client, stderr } = await connect(['examples/app', '--memory']);
    try {
      // The process's runs cannot be counted from here: that invalid arguments start no run is
      // shown over HTTP (the same server code); here the answer says so.
      await expectServiceTools(client);
      expect(stderr()).toMatch(/serving examples\/app over standard input and output as the project service/);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('as an API key (STEPWIRE_API_KEY): only the workflow its role may run, rows of its row rule', async () => {
    const temp = tempDir('mcp-key');
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
      const secret = made.stdout.trim();
      const { client, stderr } = await connect([project], { STEPWIRE_API_KEY: secret });
      try {
        await expectOpenerTools(client);
        expect(stderr()).toMatch(/as API key "agent" \(roles: opener\)/);
      } finally {
        await client.close();
      }
      const wrong = await stepwire(['mcp', project, '--key', 'sw_not_a_key']);
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toMatch(/the API key is not valid/);
      expect(wrong.stdout).toBe('');
    } finally {
      temp.remove();
    }
  }, 120_000);

  it('is listed in the help, has its own, and refuses options that are wrong, naming them', async () => {
    const main = await inProcess(['--help']);
    expect(main.stdout).toContain('  mcp <dir> [--key KEY]');
    const own = await inProcess(['mcp', '--help']);
    expect(own.code).toBe(0);
    expect(own.stdout).toMatch(/^Usage: stepwire mcp <dir>/);
    expect(own.stdout).toContain('STEPWIRE_API_KEY');
    for (const [args, message] of [
      [['mcp'], /missing arguments/],
      [['mcp', 'examples/app', '--memory', '--db', 'x'], /--memory keeps everything in memory/],
      [['mcp', 'examples/app', '--timeout', '0'], /--timeout must be a number of seconds/],
      [['mcp', 'examples/app', '--key', ' '], /--key \(or STEPWIRE_API_KEY\) is empty/],
    ] as const) {
      const result = await inProcess([...args]);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stdout).toBe('');
    }
  });
});
