import { describe, expect, it } from 'vitest';
import { QuickJsSandbox } from '../../src/script/index.js';
import { input } from './helpers.js';

describe('QuickJsSandbox stack limit', () => {
  it('runs scripts under a stack limit larger than the C stack of the QuickJS build (clamped to it)', async () => {
    const sandbox = new QuickJsSandbox();
    const result = await sandbox.run(
      input(
        "function down(n) { return n === 0 ? 0 : down(n - 1) + 1 }\nwriteEntity('totals', [{ depth: down(500) }])",
        {
          stackBytes: 8 * 1024 * 1024,
        },
      ),
    );
    expect(result.writes).toEqual({ totals: [{ depth: 500 }] });
  });
});
