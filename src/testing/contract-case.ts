import { it } from 'vitest';

/** Cases a caller skips, each with the reason its backend cannot support them. */
export type ContractSkips = { reason: string; tests: string[] }[];

/**
 * The case runner every contract suite shares: each case gets a fresh target from `create`, which
 * `dispose` cleans up after it; a case the caller skips is reported with the reason it gave.
 * @internal
 */
export function contractCase<T>(
  create: () => T | Promise<T>,
  dispose: ((target: T) => void | Promise<void>) | undefined,
  skips: ContractSkips | undefined,
): (title: string, body: (target: T) => Promise<void>) => void {
  const skipped = new Map(skips?.flatMap((s) => s.tests.map((t) => [t, s.reason] as const)) ?? []);
  return function contractTest(title, body) {
    const reason = skipped.get(title);
    const run = async () => {
      const target = await create();
      try {
        await body(target);
      } finally {
        await dispose?.(target);
      }
    };
    if (reason) it.skip(`${title} (skipped: ${reason})`, run);
    else it(title, run);
  };
}
