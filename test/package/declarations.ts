/**
 * The published declarations, built the way the package build makes them: the TypeScript compiler
 * with the options of tsconfig.json (tsup's dts build reads the same file), from the entries tsup
 * builds. Kept in memory, so no test depends on a `dist/` left over from an earlier build.
 */
import { relative, resolve } from 'node:path';
import ts from 'typescript';
import { ENTRIES } from '../../tsup.config.js';

/** The entry files, absolute. */
export const ENTRY_FILES = Object.values(ENTRIES).map((file) => resolve(file));

/** Where the emitted `.d.ts` files seem to live; nothing is written there. */
const OUT_DIR = resolve('.declarations-under-test');

/** The compiler options of tsconfig.json. */
export function projectOptions(): ts.CompilerOptions {
  const config = ts.getParsedCommandLineOfConfigFile(
    'tsconfig.json',
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (!config) throw new Error('tsconfig.json could not be read');
  return config.options;
}

/** A program over the entries and everything they import, set to emit declarations only. */
export function declarationProgram(): ts.Program {
  return ts.createProgram(ENTRY_FILES, {
    ...projectOptions(),
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    outDir: OUT_DIR,
    rootDir: resolve('src'),
  });
}

/** The declaration files of the entries and what they import, by path. */
export function emitDeclarations(program: ts.Program): Map<string, string> {
  const files = new Map<string, string>();
  const result = program.emit(undefined, (path, text) => files.set(resolve(path), text));
  if (result.emitSkipped) throw new Error('the declaration emit was skipped');
  return files;
}

/** The declarations a user's compiler reads, and what it says about them. */
export interface PublishedTypes {
  /** The declaration files reachable from the entries, by path. */
  files: Map<string, string>;
  /** Type errors in them, as `file:line: message`. */
  errors: string[];
}

/**
 * Type-checks the declaration files alone, from the entries, as a user's compiler sees them: a name
 * left dangling (say, a public method whose return type was stripped as internal) is an error here.
 */
export function readAsUser(emitted: Map<string, string>): PublishedTypes {
  const options: ts.CompilerOptions = {
    ...projectOptions(),
    noEmit: true,
    skipLibCheck: false,
    noUnusedLocals: false,
    noUnusedParameters: false,
  };
  const host = ts.createCompilerHost(options);
  const isOurs = (path: string) => emitted.has(resolve(path));
  host.fileExists = (path) => isOurs(path) || ts.sys.fileExists(path);
  host.readFile = (path) => emitted.get(resolve(path)) ?? ts.sys.readFile(path);
  host.directoryExists = (dir) =>
    resolve(dir).startsWith(OUT_DIR) || (ts.sys.directoryExists?.(dir) ?? false);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (path, language) => {
    const text = emitted.get(resolve(path));
    return text === undefined ? getSourceFile(path, language) : ts.createSourceFile(path, text, language);
  };
  const entries = ENTRY_FILES.map((file) =>
    resolve(OUT_DIR, file.slice(resolve('src').length + 1).replace(/\.ts$/, '.d.ts')),
  );
  const program = ts.createProgram(entries, options, host);
  const files = new Map(
    program
      .getSourceFiles()
      .filter((file) => isOurs(file.fileName))
      .map((file) => [resolve(file.fileName), file.text] as const),
  );
  const errors = ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file === undefined || isOurs(d.file.fileName))
    .map((d) => {
      const line = d.file ? d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1 : 0;
      const where = d.file ? `${relative('.', d.file.fileName)}:${line}: ` : '';
      return `${where}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
  return { files, errors };
}
