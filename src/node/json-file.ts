/**
 * Reading a JSON file of a project folder, with the line and column of the first mistake.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Issue } from '../errors/index.js';
import { locateJsonError } from '../http/json-error.js';

/**
 * The JSON value in `<root>/<file>` (a leading BOM allowed), or undefined after pushing an
 * `invalid_json` issue at `file` that names the line and column where the text goes wrong.
 * @internal
 */
export async function readJsonFile(root: string, file: string, issues: Issue[]): Promise<unknown> {
  const text = await readFile(join(root, file), 'utf8');
  try {
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) as unknown;
  } catch {
    const { index, reason } = locateJsonError(text);
    const before = text.slice(0, index).split('\n');
    issues.push({
      code: 'invalid_json',
      path: file,
      message: `invalid JSON at line ${before.length}, column ${before.at(-1)!.length + 1}: ${reason}`,
    });
    return undefined;
  }
}
