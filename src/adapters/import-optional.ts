/**
 * Lazy loading of optional peer dependencies (the googleapis clients, pg, PGlite), shared by the
 * adapters that need them.
 * @module
 */
import { StepwireError } from '../errors/index.js';

/**
 * Imports an optional peer dependency on first use; a missing package becomes a `StepwireError`
 * (code `missing_dependency`) naming it, the install command and, when given, what to do instead.
 * @param name The package, as in `npm install <name>`.
 * @param user What needs it, e.g. `GoogleSheets`.
 * @param load The dynamic `import()` of the package.
 * @param instead Another way, e.g. `pass an already-built client as options.client`.
 * @internal
 */
export async function importOptional<T>(
  name: string,
  user: string,
  load: () => Promise<T>,
  instead?: string,
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isModuleMissing(error, name)) {
      throw new StepwireError(
        'missing_dependency',
        `${user} needs the package "${name}", which is not installed. Install it with: npm install ${name}` +
          (instead ? ` (or ${instead})` : ''),
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
