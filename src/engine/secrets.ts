/**
 * Secrets: `{{secrets.NAME}}` in a step's data, resolved from the engine's `secrets` option when the
 * step's attempt starts (never before, never stored), and the redaction that shows each value a run
 * resolved as `[secret NAME]` wherever the run's step outputs, errors and logs leave it.
 * @module
 */
import { StepwireError } from '../errors/index.js';
import type { RunError } from './record.js';
import type { Reference, Scope } from './references.js';

/** Where secrets come from: a map of names to values, or a function (sync or async) of the name. */
export type SecretsOption =
  Readonly<Record<string, string>> | ((name: string) => string | undefined | Promise<string | undefined>);

/** The secrets option made a function once. @internal */
export type SecretResolver = (name: string) => string | undefined | Promise<string | undefined>;

/** The root of a secret's reference, reserved: no step and no workflow input may take this name. @internal */
export const SECRETS_ROOT = 'secrets';

/** The shape of a secret's name. @internal */
export const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The environment variable the CLI reads a secret from. @internal */
export const SECRET_ENV_PREFIX = 'STEPWIRE_SECRET_';

/** A secret a step's data names is not set: the step fails, and is never retried. */
export class MissingSecretError extends StepwireError {
  /** Always `"MissingSecretError"`, so guards also work across package copies. */
  override name = 'MissingSecretError';
  constructor(
    /** The secret's name. */
    readonly secret: string,
  ) {
    super('missing_secret', `secret "${secret}" is not set (${SECRET_ENV_PREFIX}${secret})`);
  }
}

/** Checks the `secrets` option and makes it one function. @throws a `TypeError` naming what is wrong. @internal */
export function secretResolver(option: unknown): SecretResolver {
  if (option === undefined) return NO_SECRETS;
  if (typeof option === 'function') {
    const resolve = option as SecretResolver;
    return function resolveSecret(name) {
      return resolve(name);
    };
  }
  if (typeof option !== 'object' || option === null || Array.isArray(option))
    throw new TypeError(
      'secrets must be an object of names to values, or a function from a name to its value',
    );
  const values = new Map<string, string>();
  for (const [name, value] of Object.entries(option)) {
    if (!SECRET_NAME.test(name))
      throw new TypeError(
        `secrets.${name}: a secret's name is letters, digits and _, not starting with a digit`,
      );
    if (typeof value !== 'string') throw new TypeError(`secrets.${name} must be a string`);
    values.set(name, value);
  }
  return function secretFromMap(name) {
    return values.get(name);
  };
}

const NO_SECRETS: SecretResolver = () => undefined;

/** What is wrong with a reference into `secrets`, when something is: it must be `{{secrets.NAME}}`. @internal */
export function secretReferenceProblem(ref: Reference): string | undefined {
  const [name, ...rest] = ref.path;
  if (typeof name === 'string' && rest.length === 0 && SECRET_NAME.test(name)) return undefined;
  return `reference ${ref.text} must name one secret, {{secrets.NAME}}, its NAME letters, digits and _ (not starting with a digit)`;
}

/**
 * The values of the secrets `names`, from the engine's resolver.
 * @throws {@link MissingSecretError} for the first one that is not set.
 * @internal
 */
export async function resolveSecrets(
  names: readonly string[],
  resolve: SecretResolver,
): Promise<Map<string, string>> {
  const values = new Map<string, string>();
  for (const name of names) {
    const value = await resolve(name);
    if (typeof value !== 'string') throw new MissingSecretError(name);
    values.set(name, value);
  }
  return values;
}

/** A run's scope with the root `secrets` added: what a step's data is resolved in when it names secrets. @internal */
export class SecretScope implements Scope {
  readonly #base: Scope;
  readonly #values: Record<string, string>;

  constructor(base: Scope, values: ReadonlyMap<string, string>) {
    this.#base = base;
    this.#values = Object.fromEntries(values);
  }

  value(root: string, step?: number): unknown {
    return root === SECRETS_ROOT && step === undefined ? this.#values : this.#base.value(root, step);
  }

  skipped(root: string): boolean {
    return root !== SECRETS_ROOT && this.#base.skipped(root);
  }
}

/**
 * The secret values one run resolved, and their redaction: each value (also as URL and JSON text
 * shows it) becomes `[secret NAME]`. @internal
 */
export class Redaction {
  /** Each form of a value to replace, longest first, and what replaces it. */
  #forms: [string, string][] = [];

  /** Adds the values of a step's secrets. An empty value hides nothing and is left out. */
  add(values: ReadonlyMap<string, string>): void {
    for (const [name, value] of values) {
      if (value === '') continue;
      const shown = `[secret ${name}]`;
      for (const form of new Set([value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1)]))
        if (!this.#forms.some(([known]) => known === form)) this.#forms.push([form, shown]);
    }
    this.#forms.sort((a, b) => b[0].length - a[0].length);
  }

  /** The text with every secret value replaced. */
  text(text: string): string {
    for (const [form, shown] of this.#forms) if (text.includes(form)) text = text.split(form).join(shown);
    return text;
  }

  /** A JSON value with every secret value in its strings (and keys) replaced; unchanged parts kept as they are. */
  value(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) {
      const items = value.map((item) => this.value(item));
      return items.every((item, i) => item === value[i]) ? value : items;
    }
    if (typeof value !== 'object' || value === null || value instanceof Uint8Array) return value;
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const shownKey = this.text(key);
      const shown = this.value(item);
      if (shownKey !== key || shown !== item) changed = true;
      Object.defineProperty(out, shownKey, {
        value: shown,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return changed ? out : value;
  }

  /** A run error with its message and issues' messages redacted. */
  error(error: RunError): RunError {
    const out: RunError = { ...error, message: this.text(error.message) };
    if (error.issues)
      out.issues = error.issues.map((issue) => ({
        ...issue,
        path: this.text(issue.path),
        message: this.text(issue.message),
      }));
    return out;
  }

  /** True when `value` (a child run's input) holds a secret value. */
  holds(value: unknown): boolean {
    return this.#forms.length > 0 && this.value(value) !== value;
  }
}
