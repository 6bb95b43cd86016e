import { relative } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  declarationProgram,
  emitDeclarations,
  ENTRY_FILES,
  readAsUser,
  type PublishedTypes,
} from './declarations.js';
import { SECTION_MENTION } from './section-mention.js';

let program: ts.Program;
let published: PublishedTypes;

// Compiling the whole package twice (sources, then the declarations alone) takes a while.
beforeAll(() => {
  program = declarationProgram();
  published = readAsUser(emitDeclarations(program));
}, 180_000);

/**
 * Whether the comment right before a declaration marks it `@internal`, the rule `stripInternal`
 * itself applies (the text of the last leading comment contains `@internal`).
 */
function markedInternal(declaration: ts.Declaration): boolean {
  const node = ts.isVariableDeclaration(declaration) ? declaration.parent.parent : declaration;
  const text = node.getSourceFile().text;
  const comment = ts.getLeadingCommentRanges(text, node.pos)?.at(-1);
  return comment !== undefined && text.slice(comment.pos, comment.end).includes('@internal');
}

/** `entry: name (file)` of every name an entry exports whose declaration is marked `@internal`. */
function internalExports(): string[] {
  const checker = program.getTypeChecker();
  const found: string[] = [];
  for (const entry of ENTRY_FILES) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
    for (const symbol of checker.getExportsOfModule(module)) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      for (const declaration of target.declarations ?? []) {
        if (markedInternal(declaration))
          found.push(
            `${relative('.', entry)}: ${symbol.name} (${relative('.', declaration.getSourceFile().fileName)})`,
          );
      }
    }
  }
  return found;
}

describe('published types', () => {
  it('the declaration build strips @internal (stripInternal in tsconfig.json)', () => {
    expect(program.getCompilerOptions().stripInternal).toBe(true);
    const mentions = [...published.files]
      .filter(([, text]) => text.includes('@internal'))
      .map(([path]) => relative('.', path));
    expect(mentions).toEqual([]);
  });

  it('no entry exports a name marked @internal', () => {
    expect(internalExports()).toEqual([]);
  });

  it('the declarations type-check alone: nothing public refers to something stripped', () => {
    expect(published.files.size).toBeGreaterThan(ENTRY_FILES.length);
    expect(published.errors).toEqual([]);
  });

  it('no declaration mentions SPEC or DESIGN sections', () => {
    const mentions = [...published.files].flatMap(([path, text]) =>
      text
        .split('\n')
        .flatMap((line, index) =>
          SECTION_MENTION.test(line) ? [`${relative('.', path)}:${index + 1}: ${line.trim()}`] : [],
        ),
    );
    expect(mentions).toEqual([]);
  });
});
