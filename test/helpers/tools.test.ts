import { afterEach, describe, expect, it, vi } from 'vitest';
import { findTool, toolVersion } from './tools.js';

afterEach(() => vi.unstubAllEnvs());

describe('findTool', () => {
  it('finds a tool on PATH and gives its full path', () => {
    expect(findTool({ name: 'sh', install: 'apt-get install -y dash' })).toMatch(/\/sh$/);
  });

  it('tries the candidates before PATH', () => {
    const tool = { name: 'node-first', install: 'npm ci', candidates: ['/nowhere/node', process.execPath] };
    expect(findTool(tool)).toBe(process.execPath);
    expect(toolVersion({ ...tool, name: 'node-version' })?.version).toBe(process.version);
  });

  it('outside CI: prints a notice naming the tool and what installs it, and gives undefined', () => {
    vi.stubEnv('CI', '');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    expect(
      findTool({ name: 'stepwire-no-such-tool', install: 'apt-get install -y nothing' }),
    ).toBeUndefined();
    expect(warn).toHaveBeenCalledWith(
      'stepwire-no-such-tool is not installed (apt-get install -y nothing): skipping the tests and checks that need it',
    );
    warn.mockRestore();
  });

  it('under CI: throws naming the tool and what installs it', () => {
    vi.stubEnv('CI', 'true');
    expect(() =>
      findTool({ name: 'stepwire-missing-in-ci', install: 'apt-get install -y poppler-utils' }),
    ).toThrow(
      'stepwire-missing-in-ci is not installed (apt-get install -y poppler-utils): CI runs every test',
    );
  });
});
