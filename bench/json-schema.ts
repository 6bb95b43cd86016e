/**
 * Time per `validate()` call of the JSON Schema validator on a small workflow input schema,
 * compared in the same run with zod 4 (JIT, and jitless as on edge runtimes that forbid
 * `new Function`). Run: `npx tsx bench/json-schema.ts`.
 */
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { compileSchema } from '../src/json-schema/index.js';

const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1 },
    amount: { type: 'number', minimum: 0 },
    tags: { type: 'array', items: { type: 'string' } },
    customer: { type: 'object', properties: { id: { type: 'integer' } } },
  },
  required: ['name', 'amount'],
};

const VALID = { name: 'Invoice 42', amount: 129.5, tags: ['urgent', 'eu'], customer: { id: 7 } };
const INVALID = { name: '', amount: 'x', tags: ['ok', 3], customer: { id: 1.5 } };

function zodSchema() {
  return z.object({
    name: z.string().min(1),
    amount: z.number().min(0),
    tags: z.array(z.string()).optional(),
    customer: z.object({ id: z.number().int() }).optional(),
  });
}

/** Best of several rounds, in microseconds per call. */
function measure(fn: () => unknown): number {
  const iterations = 100_000;
  for (let i = 0; i < 20_000; i += 1) fn(); // warm-up
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 7; round += 1) {
    const start = performance.now();
    for (let i = 0; i < iterations; i += 1) fn();
    best = Math.min(best, ((performance.now() - start) * 1000) / iterations);
  }
  return best;
}

/** Prints the time per check of each validator and the ratios. */
export async function run(): Promise<void> {
  const compiled = compileSchema(SCHEMA);
  const zodJit = zodSchema();
  // jitless is a global zod setting read when a schema is built: build one schema under it, then restore.
  z.config({ jitless: true });
  const zodJitless = zodSchema();
  z.config({ jitless: false });
  if (compiled.validate(VALID).length !== 0 || compiled.validate(INVALID).length !== 4)
    throw new Error('validator sanity check failed');
  if (!zodJitless.safeParse(VALID).success || zodJitless.safeParse(INVALID).error?.issues.length !== 4) {
    throw new Error('zod sanity check failed');
  }

  const rows: [string, number, number, number][] = [];
  for (const [label, value] of [
    ['valid value', VALID],
    ['invalid value (4 issues)', INVALID],
  ] as const) {
    const ours = measure(() => compiled.validate(value));
    const jitless = measure(() => zodJitless.safeParse(value));
    const jit = measure(() => zodJit.safeParse(value));
    rows.push([label, ours, jitless, jit]);
  }
  console.log(
    'json-schema: small object schema (name, amount, tags[], customer.id), µs per check, best of 7 × 100k',
  );
  for (const [label, ours, jitless, jit] of rows) {
    console.log(
      `  ${label.padEnd(26)} stepwire ${ours.toFixed(3)} µs | zod jitless ${jitless.toFixed(3)} µs (x${(jitless / ours).toFixed(1)}) | zod jit ${jit.toFixed(3)} µs (x${(jit / ours).toFixed(1)})`,
    );
  }
  // Compiling a schema against building the zod schema and running its first check (when zod compiles it).
  const perSchema = (fn: () => unknown): number => {
    const start = performance.now();
    for (let i = 0; i < 1000; i += 1) fn();
    return performance.now() - start; // ms for 1,000 = µs for one
  };
  const compile = perSchema(() => compileSchema(SCHEMA));
  const zodBuild = perSchema(() => zodSchema().safeParse(VALID));
  console.log(
    `  compileSchema: ${compile.toFixed(1)} µs per schema | zod schema built + first check ${zodBuild.toFixed(1)} µs (x${(zodBuild / compile).toFixed(2)})`,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run();
}
