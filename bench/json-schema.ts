/**
 * Time per `validate()` call of the JSON Schema validator on a small workflow input schema,
 * compared in the same run with zod 4 (JIT, and jitless as on edge runtimes that forbid
 * `new Function`). Run: `npx tsx bench/json-schema.ts`.
 */
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { compileSchema } from '../src/json-schema/index.js';
import { check, checkEqual, sized } from './util.js';

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
  const iterations = sized(100_000, 200);
  for (let i = 0; i < sized(20_000, 50); i += 1) fn(); // warm-up
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < sized(7, 1); round += 1) {
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
  checkEqual(compiled.validate(VALID), [], 'the valid value has no issues');
  checkEqual(
    compiled
      .validate(INVALID)
      .map((issue) => issue.path)
      .sort(),
    ['amount', 'customer.id', 'name', 'tags[1]'],
    'the invalid value has its 4 issues, one per bad place',
  );
  for (const [name, schema] of [
    ['zod jitless', zodJitless],
    ['zod jit', zodJit],
  ] as const) {
    check(schema.safeParse(VALID).success, `${name} takes the valid value`);
    check(schema.safeParse(INVALID).error?.issues.length === 4, `${name} finds the 4 issues`);
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
    `json-schema: small object schema (name, amount, tags[], customer.id), µs per check, best of ${sized(7, 1)} × ${sized(100_000, 200).toLocaleString('en')}`,
  );
  for (const [label, ours, jitless, jit] of rows) {
    console.log(
      `  ${label.padEnd(26)} stepwire ${ours.toFixed(3)} µs | zod jitless ${jitless.toFixed(3)} µs (x${(jitless / ours).toFixed(1)}) | zod jit ${jit.toFixed(3)} µs (x${(jit / ours).toFixed(1)})`,
    );
  }
  // Compiling a schema against building the zod schema and running its first check (when zod compiles it).
  const perSchema = (fn: () => unknown): number => {
    const start = performance.now();
    const count = sized(1000, 10);
    for (let i = 0; i < count; i += 1) fn();
    return ((performance.now() - start) * 1000) / count;
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
