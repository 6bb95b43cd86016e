/**
 * `stepwire.json`: the settings of a project folder, read by every `stepwire` command.
 * @module
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ValidationError, issuesUnder, type Issue } from '../errors/index.js';
import { DEFAULT_LIMITS } from '../engine/options.js';
import type { EngineLimits } from '../engine/options.js';
import { compileAllowHosts } from '../request/policy.js';
import { check } from '../schema/index.js';
import { readJsonFile } from './json-file.js';
import { publicUrlBase, publicUrlProblem } from './public-url.js';

/** The file name of a project's settings. */
export const SETTINGS_FILE = 'stepwire.json';

const limitShape = Object.fromEntries(
  Object.keys(DEFAULT_LIMITS).map((name) => [
    name,
    z
      .number()
      .positive()
      .optional()
      .describe(`the engine limit ${name} (default ${DEFAULT_LIMITS[name as keyof EngineLimits]})`),
  ]),
) as Record<keyof EngineLimits, z.ZodOptional<z.ZodNumber>>;

/**
 * The zod schema of `stepwire.json` (its JSON Schema is published as `schemas/project-settings.json`).
 * Strict: a misspelled setting is refused, never ignored.
 */
export const ProjectSettingsSchema = z
  .strictObject({
    $schema: z.string().optional().describe('the JSON Schema of this file, for editors'),
    allowHosts: z
      .array(z.string().min(1))
      .optional()
      .describe(
        'hosts request steps may reach although they are local or private, e.g. "127.0.0.1:8080" or "billing.internal" (the engine option security.allowHosts)',
      ),
    limits: z
      .strictObject(limitShape)
      .optional()
      .describe('engine limits that differ from the defaults (the engine option limits)'),
    publicUrl: z
      .string()
      .optional()
      .describe(
        'the address clients reach `stepwire serve` at, e.g. https://flows.example.com: every link serve, worker and run hand out (file URLs, app and hook addresses) starts with it (the --public-url option wins over it)',
      ),
  })
  .superRefine((settings, ctx) => {
    (settings.allowHosts ?? []).forEach((entry, i) => {
      try {
        compileAllowHosts([entry]);
      } catch {
        ctx.addIssue({
          code: 'custom',
          path: ['allowHosts', i],
          message: `"${entry}" is not a host name or IP with an optional port, e.g. "api.example.com" or "127.0.0.1:8080"`,
        });
      }
    });
    const problem = settings.publicUrl === undefined ? undefined : publicUrlProblem(settings.publicUrl);
    if (problem !== undefined)
      ctx.addIssue({ code: 'custom', path: ['publicUrl'], message: `publicUrl ${problem}` });
  });

/** The settings of a project folder, as `stepwire.json` holds them. */
export type ProjectSettings = z.input<typeof ProjectSettingsSchema>;

/**
 * The settings in `<dir>/stepwire.json`, or `{}` when the folder has no such file; `publicUrl` comes
 * back without a trailing slash.
 * @throws `ValidationError` listing every problem, each path `stepwire.json: <json path>`.
 * @example
 * ```ts
 * const settings = await readProjectSettings('./project'); // { allowHosts: ['127.0.0.1:8080'] }
 * ```
 */
export async function readProjectSettings(dir: string): Promise<ProjectSettings> {
  const info = await stat(join(dir, SETTINGS_FILE)).catch(() => undefined);
  if (info === undefined) return {};
  const issues: Issue[] = [];
  if (!info.isFile())
    throw new ValidationError([
      { code: 'invalid_settings', path: SETTINGS_FILE, message: `${SETTINGS_FILE} is not a file` },
    ]);
  const body = await readJsonFile(dir, SETTINGS_FILE, issues);
  if (issues.length > 0) throw new ValidationError(issues);
  const result = check(ProjectSettingsSchema, body);
  if (!result.ok) throw new ValidationError(issuesUnder(result.issues, SETTINGS_FILE, ': '));
  const settings = result.value;
  return settings.publicUrl === undefined
    ? settings
    : { ...settings, publicUrl: publicUrlBase(settings.publicUrl) };
}
