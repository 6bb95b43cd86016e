/**
 * Lazy loading of the optional googleapis client packages.
 * @module
 */
import { StepwireError } from '../../errors/index.js';

/**
 * Imports an optional peer dependency on first use; a missing package becomes a `StepwireError`
 * (code `missing_dependency`) naming it, the install command and `alternative` (what else the user
 * can do; empty for nothing). @internal
 */
export async function importOptional<T>(
  name: string,
  user: string,
  load: () => Promise<T>,
  alternative = 'pass an already-built client as options.client',
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isModuleMissing(error, name)) {
      throw new StepwireError(
        'missing_dependency',
        `${user} needs the package "${name}", which is not installed. Install it with: npm install ${name}` +
          (alternative === '' ? '' : ` (or ${alternative})`),
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
