/**
 * Lazy loading of the optional googleapis client packages.
 * @module
 */
import { importOptional as importPackage } from '../import-optional.js';

export { namedExport } from '../import-optional.js';

/**
 * Imports an optional googleapis package on first use; a missing package becomes a `StepwireError`
 * (code `missing_dependency`) naming it and the install command. @internal
 */
export function importOptional<T>(name: string, user: string, load: () => Promise<T>): Promise<T> {
  return importPackage(name, user, load, 'pass an already-built client as options.client');
}
