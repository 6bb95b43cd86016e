/**
 * Lazy loading of optional peer packages (the googleapis clients, database drivers, exceljs), so the
 * core never needs them and a missing one is an error that says what to install.
 * @module
 */
import { StepwireError } from '../errors/index.js';

/**
 * Imports an optional peer dependency on first use; a missing package becomes a `StepwireError`
 * (code `missing_dependency`) naming it and the install command. @internal
 */
export async function importOptional<T>(
  name: string,
  user: string,
  load: () => Promise<T>,
  hint = ' (or pass an already-built client as options.client)',
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isModuleMissing(error, name)) {
      throw new StepwireError(
        'missing_dependency',
        `${user} needs the package "${name}", which is not installed. Install it with: npm install ${name}${hint}`,
        { cause: error },
      );
    }
    throw error;
  }
}

function isModuleMissing(error: unknown, name: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return (
    (code === 'ERR_MODULE_NOT_FOUND' ||
      code === 'MODULE_NOT_FOUND' ||
      /Cannot find (module|package)/.test(message)) &&
    message.includes(name)
  );
}

/** The module's named export, also when a CJS package arrives as `{ default: exports }`. @internal */
export function namedExport<T>(module: unknown, name: string): T {
  const direct = (module as Record<string, unknown>)[name];
  if (direct !== undefined) return direct as T;
  return ((module as { default?: Record<string, unknown> }).default ?? {})[name] as T;
}
