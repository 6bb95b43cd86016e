/**
 * Stands in for `vitest` in the CommonJS build of `stepwire/testing`: vitest is ESM-only and
 * refuses `require()`, so the suites can only run when this entry is imported. Loading the CJS
 * build works; calling a suite from it explains what to do.
 * @internal
 */
function unavailable(): never {
  throw new Error(
    'stepwire/testing runs its suites under vitest, which is ESM-only: load it with `import`, not `require()`.',
  );
}

export const describe = unavailable;
export const it = Object.assign(unavailable, { skip: unavailable });
export const expect = unavailable;
