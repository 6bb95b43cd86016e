import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { loadProject } from '../node/project.js';
import { ValidationError, type Issue } from '../errors/index.js';
import { HELP } from './help.js';
import { EXIT, parseCommand, type CliIo } from './io.js';
import { printIssues, printWarnings } from './report.js';
import type { Engine } from '../engine/engine.js';

/** `stepwire validate <dir>`: every problem with its file and path; exit 1 when there is any. @internal */
export async function validateCommand(args: string[], io: CliIo): Promise<number> {
  const { positionals, help } = parseCommand('validate', args, {}, { min: 1, max: 1 });
  if (help) return (io.out(HELP['validate']!), EXIT.ok);
  const dir = positionals[0]!;
  try {
    const loaded = await loadProject(dir).catch(async (error: unknown) => {
      if (!(error instanceof ValidationError)) throw error;
      throw new ValidationError([...error.issues, ...(await scriptSyntaxIssues(dir))]);
    });
    const syntax = await scriptSyntaxIssues(dir);
    if (syntax.length > 0) throw new ValidationError(syntax);
    const { engine, problems } = loaded;
    printWarnings(io, problems);
    const counts = [
      [(await engine.catalog.listEntities()).length, 'entity', 'entities'],
      [(await engine.catalog.listRelationships()).length, 'relationship', 'relationships'],
      [(await engine.scripts.list()).length, 'script', 'scripts'],
      [(await engine.workflows.list()).length, 'workflow', 'workflows'],
      [(await engine.applications.list()).length, 'application', 'applications'],
      [(await engine.triggers.list()).length, 'trigger', 'triggers'],
    ] as const;
    io.out(`✓ ${dir} is valid: ${counts.map(([n, one, many]) => `${n} ${n === 1 ? one : many}`).join(', ')}`);
    await printStepOrder(io, engine);
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const n = error.issues.length;
    printIssues(io, error.issues, `✗ ${dir} has ${n} problem${n === 1 ? '' : 's'}:`, io.out);
    return EXIT.failure;
  }
}

/**
 * The order each workflow starts its steps in: after the steps it references or is wired from, and a
 * read of an entity after the writes of it listed before it (data order).
 */
async function printStepOrder(io: CliIo, engine: Engine): Promise<void> {
  const names = (await engine.workflows.list()).map((w) => w.name).sort();
  if (names.length === 0) return;
  io.out('Steps run in this order (each after the steps it reads, is wired from, or must follow for data):');
  for (const name of names) {
    const { plan } = await engine.workflows.prepared(name);
    const waits = plan.steps.filter((s) => s.dependsOn.length > 0);
    io.out(`  ${name}: ${plan.order.map((i) => plan.steps[i]!.step.name).join(' → ')}`);
    for (const s of waits)
      io.out(`    ${s.step.name} waits for ${s.dependsOn.map((d) => plan.steps[d]!.step.name).join(', ')}`);
  }
}

/**
 * The syntax errors of `scripts/*.js`, each with its line: every script is compiled as the global
 * script the sandbox evaluates, and never run.
 */
async function scriptSyntaxIssues(dir: string): Promise<Issue[]> {
  const entries = await readdir(join(dir, 'scripts'), { withFileTypes: true }).catch(() => []);
  const issues: Issue[] = [];
  for (const entry of entries.filter((e) => e.isFile() && e.name.endsWith('.js'))) {
    const file = `scripts/${entry.name}`;
    try {
      new Script(await readFile(join(dir, file), 'utf8'), { filename: file });
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      const line = /^[^\n]*:(\d+)\n/.exec(error.stack ?? '')?.[1];
      issues.push({
        code: 'syntax_error',
        path: file,
        message: `syntax error${line === undefined ? '' : ` at line ${line}`}: ${error.message}`,
      });
    }
  }
  return issues.sort((a, b) => a.path.localeCompare(b.path));
}
