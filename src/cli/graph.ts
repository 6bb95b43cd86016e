import { loadProject } from '../node/project.js';
import { NotFoundError } from '../errors/index.js';
import { workflowGraphSvg } from '../pictures/index.js';
import { HELP } from './help.js';
import { EXIT, parseCommand, writeOutput, type CliIo } from './io.js';
import { printWarnings } from './report.js';

/**
 * `stepwire graph <dir> <workflow> [--out FILE]`: the workflow as an SVG picture, on standard output
 * or into FILE; exit 1 when the project is invalid or has no such workflow.
 * @internal
 */
export async function graphCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals, help } = parseCommand(
    'graph',
    args,
    { out: { type: 'string', short: 'o' } },
    { min: 2, max: 2 },
  );
  if (help) return (io.out(HELP['graph']!), EXIT.ok);
  const [dir, name] = positionals as [string, string];
  const { engine, problems } = await loadProject(dir);
  printWarnings(io, problems);
  let svg: string;
  try {
    svg = workflowGraphSvg(await engine.workflows.get(name));
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    const names = (await engine.workflows.list()).map((w) => w.name);
    io.err(`✗ there is no workflow "${name}" in ${dir} (workflows: ${names.join(', ') || 'none'})`);
    return EXIT.failure;
  }
  const out = values['out'] as string | undefined;
  if (out === undefined) io.out(svg.trimEnd());
  else {
    await writeOutput(out, svg);
    io.err(`wrote ${out}`);
  }
  return EXIT.ok;
}
