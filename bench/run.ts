/**
 * Runs every benchmark (or those named on the command line) and prints their figures.
 * `npm run bench` or `npm run bench -- entity-read workflow-overhead`.
 */
export {};

const ALL = [
  'entity-read',
  'workflow-overhead',
  'for-each',
  'json-schema',
  'transform',
  'pdf',
  'http',
  'storage',
  'durable',
] as const;

const wanted = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const names = wanted.length > 0 ? wanted : [...ALL];
for (const name of names) {
  if (!(ALL as readonly string[]).includes(name)) {
    console.error(`unknown benchmark "${name}" (known: ${ALL.join(', ')})`);
    process.exit(2);
  }
}
for (const name of names) {
  console.log(`\n=== ${name} ===`);
  const module = (await import(`./${name}.ts`)) as { run: () => Promise<void> };
  await module.run();
}
