import { loadProject } from '../node/project.js';
import { ValidationError } from '../errors/index.js';
import { HELP } from './help.js';
import { EXIT, parseCommand, type CliIo } from './io.js';
import { printIssues, printWarnings } from './report.js';

/** `stepwire validate <dir>`: every problem with its file and path; exit 1 when there is any. @internal */
export async function validateCommand(args: string[], io: CliIo): Promise<number> {
  const { positionals, help } = parseCommand('validate', args, {}, { min: 1, max: 1 });
  if (help) return (io.out(HELP['validate']!), EXIT.ok);
  const dir = positionals[0]!;
  try {
    const { engine, problems } = await loadProject(dir);
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
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const n = error.issues.length;
    printIssues(io, error.issues, `✗ ${dir} has ${n} problem${n === 1 ? '' : 's'}:`, io.out);
    return EXIT.failure;
  }
}
