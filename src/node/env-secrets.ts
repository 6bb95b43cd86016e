import { SECRET_ENV_PREFIX } from '../engine/secrets.js';

/**
 * The engine's `secrets` option from environment variables: `{{secrets.API_KEY}}` reads
 * `STEPWIRE_SECRET_API_KEY`, when a step that names it starts (so a changed variable counts from the
 * next step on). What `stepwire serve`, `worker` and `run` use.
 * @example
 * new Engine({ secrets: envSecrets() });
 */
export function envSecrets(
  env: Readonly<Record<string, string | undefined>> = process.env,
): (name: string) => string | undefined {
  return function secretFromEnv(name) {
    return env[`${SECRET_ENV_PREFIX}${name}`];
  };
}
