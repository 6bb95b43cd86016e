/**
 * The guides in docs/guides tell the truth: every TypeScript block marked `<!-- test -->` runs as
 * written, with its own assertions, against the sources (`from 'stepwire'` is rewritten to src/index.ts,
 * `from 'stepwire/node'` to src/node/index.ts, ...). Blocks marked `<!-- file: path -->` are written into
 * a folder of their own guide first, and the blocks run with that folder as the working directory
 * (`process.chdir`: this file needs the forks pool, the project's). A block that imports vitest or
 * stepwire/testing is a test file: its tests are collected here and run as tests of this file, in the
 * repository's root, as vitest runs a project's tests in its root. A text block marked
 * `<!-- output: <command> -->` is what `stepwire <command>` prints in the guide's folder.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/cli.js';
import type { CliIo } from '../../src/cli/io.js';

const ROOT = resolve(import.meta.dirname, '../..');
const GUIDES = [
  'transforms.md',
  'step-order-and-wires.md',
  'testing-a-workflow.md',
  'builders.md',
  'deploying-with-workers.md',
  'secrets.md',
  'human-steps.md',
];

/** The package's entries, as the guides import them, and their sources. */
const ENTRIES: Record<string, string> = {
  stepwire: 'src/index.ts',
  'stepwire/node': 'src/node/index.ts',
  'stepwire/testing': 'src/testing/index.ts',
  'stepwire/http': 'src/http/index.ts',
  'stepwire/schema': 'src/schema-entry.ts',
};

interface Block {
  /** What the comment before the block says: run it, write it as a file, or compare it with a command's output. */
  mark: 'test' | 'file' | 'output' | undefined;
  /** The text after the mark's colon: a file's path, or a command. */
  argument: string;
  lang: string;
  code: string;
  /** Line of the opening fence in the guide, from 1. */
  line: number;
}

/** Every fenced block of a guide, with the HTML comment on the line before it (after one blank line). */
function blocksOf(text: string): Block[] {
  const blocks: Block[] = [];
  const fence = /^```(\w*)\n([\s\S]*?)^```$/gm;
  for (let match = fence.exec(text); match; match = fence.exec(text)) {
    const before = text.slice(0, match.index);
    const comment = /<!-- (test|file|output)(?:: (.+?))? -->\n\n?$/.exec(before);
    blocks.push({
      mark: comment?.[1] as Block['mark'],
      argument: comment?.[2] ?? '',
      lang: match[1]!,
      code: match[2]!,
      line: before.split('\n').length,
    });
  }
  return blocks;
}

/** The block's code importing the sources instead of the package. */
function fromSources(code: string): string {
  return code.replace(/from '(stepwire(?:\/[a-z]+)?)'/g, (_, entry: string) => {
    const source = ENTRIES[entry];
    if (source === undefined) throw new Error(`no source is known for the entry ${entry}`);
    return `from ${JSON.stringify(pathToFileURL(join(ROOT, source)).href)}`;
  });
}

// Inside the repository, so the blocks' own imports (vitest, node:assert) resolve as in a project.
mkdirSync(join(ROOT, '.tmp'), { recursive: true });
const work = mkdtempSync(join(ROOT, '.tmp', 'guides-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs `fn` in `dir` as the working directory, and comes back. */
async function inDir<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const before = process.cwd();
  process.chdir(dir);
  try {
    return await fn();
  } finally {
    process.chdir(before);
  }
}

for (const guide of GUIDES) {
  const text = readFileSync(join(ROOT, 'docs/guides', guide), 'utf8');
  const blocks = blocksOf(text);
  const dir = join(work, guide.replace(/\.md$/, ''));
  mkdirSync(dir, { recursive: true });
  for (const block of blocks.filter((b) => b.mark === 'file')) {
    mkdirSync(dirname(join(dir, block.argument)), { recursive: true });
    writeFileSync(join(dir, block.argument), block.lang === 'ts' ? fromSources(block.code) : block.code);
  }
  /** The module file of a block that runs. */
  const moduleOf = (block: Block) => {
    const file = join(dir, `.block-${block.line}.ts`);
    writeFileSync(file, fromSources(block.code));
    return pathToFileURL(file).href;
  };

  describe(`docs/guides/${guide}`, () => {
    it('marks every TypeScript block to run and every JSON or script block as a file', () => {
      for (const block of blocks) {
        if (block.lang === 'ts') expect(['test', 'file'], `line ${block.line}`).toContain(block.mark);
        if (['js', 'json', 'csv'].includes(block.lang)) expect(block.mark, `line ${block.line}`).toBe('file');
      }
      expect(blocks.filter((b) => b.mark === 'test').length).toBeGreaterThanOrEqual(3);
    });

    it('links to files and headings that exist', () => {
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [path, anchor] = target!.split('#') as [string, string | undefined];
        const file = join(ROOT, 'docs/guides', path);
        const linked = readFileSync(file, 'utf8');
        if (anchor !== undefined) expect(anchorsOf(linked), `${target}`).toContain(anchor);
      }
    });
  });

  for (const block of blocks) {
    const name = `docs/guides/${guide} line ${block.line}`;
    if (block.mark === 'test' && /from '(vitest|stepwire\/testing)'/.test(block.code)) {
      // A test file: its tests are collected now, as tests of this file.
      describe(name, async () => {
        await import(/* @vite-ignore */ moduleOf(block));
      });
    } else if (block.mark === 'test') {
      it(`${name} runs and its assertions hold`, async () => {
        const url = moduleOf(block);
        await inDir(dir, () => import(/* @vite-ignore */ url));
      });
    } else if (block.mark === 'output') {
      it(`${name} is what \`stepwire ${block.argument}\` prints`, async () => {
        const lines: string[] = [];
        const io: CliIo = {
          out: (l) => lines.push(l),
          err: (l) => lines.push(l),
          stopped: () => Promise.resolve(),
        };
        const code = await inDir(dir, () => runCli(block.argument.split(' '), io));
        expect(lines.join('\n')).toBe(block.code.trimEnd());
        expect(code).toBe(0);
      });
    }
  }
}

/** The anchors GitHub makes of a Markdown file's headings. */
function anchorsOf(markdown: string): string[] {
  return [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map(([, heading]) =>
    heading!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-'),
  );
}
