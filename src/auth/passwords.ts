/**
 * Password hashes as PHC strings. On Node, argon2id through `@node-rs/argon2`
 * (`$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`, OWASP's parameters); where that package cannot
 * load (workerd, Deno without it, an unsupported platform), PBKDF2-SHA256 through Web Crypto with
 * 600,000 iterations (`$pbkdf2-sha256$i=600000$<salt>$<hash>`). {@link verifyPassword} reads both,
 * so a user made on one runtime signs in on the other as long as argon2 loads where it is needed.
 * @module
 */
import { StepwireError, ValidationError } from '../errors/index.js';
import { namedExport } from '../adapters/import-optional.js';
import { pbkdf2Hash, pbkdf2Verify } from './pbkdf2.js';

/** Fewest characters a password may have. */
export const MIN_PASSWORD_LENGTH = 12;

/** How a password is hashed: argon2id (where it loads) or PBKDF2-SHA256. */
export type PasswordAlgorithm = 'argon2id' | 'pbkdf2-sha256';

/** Options of {@link hashPassword}. */
export interface HashPasswordOptions {
  /**
   * The algorithm; argon2id fails with code `missing_dependency` where it cannot load.
   * @default argon2id where `@node-rs/argon2` loads, else pbkdf2-sha256
   */
  algorithm?: PasswordAlgorithm;
}

/** OWASP's argon2id parameters: 19 MiB of memory, 2 passes, 1 lane. */
const ARGON2ID = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;
const PACKAGE = '@node-rs/argon2';

/** What is used of `@node-rs/argon2`. */
interface Argon2 {
  hash(password: string, options: typeof ARGON2ID): Promise<string>;
  verify(hashed: string, password: string): Promise<boolean>;
}

let argon2: Promise<Argon2 | undefined> | undefined;

/**
 * The password's PHC string, with a random salt.
 * @throws {@link ValidationError} naming `password` when it is not a string of at least 12 characters.
 * @example
 * ```ts
 * const phc = await hashPassword('correct horse battery staple');
 * await verifyPassword('correct horse battery staple', phc); // true
 * ```
 */
export async function hashPassword(password: string, options: HashPasswordOptions = {}): Promise<string> {
  checkPassword(password);
  const algorithm = options.algorithm;
  if (algorithm !== undefined && algorithm !== 'argon2id' && algorithm !== 'pbkdf2-sha256')
    throw new TypeError(`hashPassword: algorithm must be "argon2id" or "pbkdf2-sha256"`);
  if (algorithm === 'pbkdf2-sha256') return pbkdf2Hash(password);
  const library = await loadArgon2();
  if (library) return library.hash(password, ARGON2ID);
  if (algorithm === 'argon2id') throw missingArgon2();
  return pbkdf2Hash(password);
}

/**
 * Whether `password` is the one `phc` was made from. A string of neither form is false.
 * @throws {@link StepwireError} code `missing_dependency` for an argon2id hash where
 *   `@node-rs/argon2` cannot load.
 */
export async function verifyPassword(password: string, phc: string): Promise<boolean> {
  if (typeof password !== 'string' || typeof phc !== 'string') return false;
  if (phc.startsWith('$pbkdf2-sha256$')) return pbkdf2Verify(password, phc);
  if (!phc.startsWith('$argon2id$')) return false;
  const library = await loadArgon2();
  if (!library) throw missingArgon2();
  try {
    return await library.verify(phc, password);
  } catch {
    // A malformed hash string: no password matches it.
    return false;
  }
}

/**
 * Throws unless `password` is a string of at least {@link MIN_PASSWORD_LENGTH} characters.
 * @throws {@link ValidationError} naming `path`.
 * @internal
 */
export function checkPassword(password: unknown, path = 'password'): asserts password is string {
  if (typeof password === 'string' && [...password].length >= MIN_PASSWORD_LENGTH) return;
  throw new ValidationError([
    {
      code: typeof password === 'string' ? 'too_small' : 'invalid_type',
      path,
      message: `${path} must be a string of at least ${MIN_PASSWORD_LENGTH} characters`,
    },
  ]);
}

/** `@node-rs/argon2`, loaded once; undefined where it cannot load. */
function loadArgon2(): Promise<Argon2 | undefined> {
  // The name is not a literal, so that a bundler for an edge runtime leaves the native package out
  // instead of failing on its binaries; there the import fails and PBKDF2 is used.
  const name = PACKAGE;
  return (argon2 ??= import(/* @vite-ignore */ name).then(
    (module: unknown) => {
      const hash = namedExport<Argon2['hash'] | undefined>(module, 'hash');
      const verify = namedExport<Argon2['verify'] | undefined>(module, 'verify');
      return hash && verify ? { hash, verify } : undefined;
    },
    () => undefined,
  ));
}

function missingArgon2(): StepwireError {
  return new StepwireError(
    'missing_dependency',
    `argon2id password hashes need the package "${PACKAGE}", which cannot be loaded here. Install it with: npm install ${PACKAGE}`,
  );
}
