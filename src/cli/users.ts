/**
 * `stepwire users add|list|set-roles|disable|reset-password`: the people who sign in to a project's
 * server with a password.
 * @module
 */
import { NotFoundError } from '../errors/index.js';
import { randomToken } from '../auth/tokens.js';
import type { User, Users } from '../auth/users.js';
import { EXIT, UsageError, parseCommand, type CliIo } from './io.js';
import {
  DATABASE_HELP,
  DATABASE_OPTIONS,
  describeRoles,
  parseRoles,
  withCredentialStores,
  withUsage,
} from './keys.js';

const HELP = `Usage: stepwire users add --email EMAIL --roles ROLE,... [--name NAME] [--password-stdin]
       stepwire users list [--json]
       stepwire users set-roles <email> ROLE,...
       stepwire users disable <email>
       stepwire users reset-password <email>
       (each with [--db URL|DIR] [--dir DIR])

People who sign in to "stepwire serve" with an e-mail address and a password. add without
--password-stdin, and reset-password, print a new random password once on standard output:
give it to the person. disable refuses the user's sign-in and ends their sessions;
reset-password ends them too.

Options:
      --email EMAIL     the user's e-mail address (add)
      --roles LIST      the access policy's roles, comma-separated (add)
      --name NAME       a display name (add)
      --password-stdin  read the password (at least 12 characters) from standard input (add)
      --json            print the list as JSON (list)
${DATABASE_HELP}

Exit codes: 0 ok, 1 failure (invalid input, e-mail taken, no such user), 2 usage error.`;

/** What `--password-stdin` reads; tests pass it in `io`. */
type StdinIo = CliIo & { stdin?: () => Promise<string> };

/** Bytes of a printed one-time password: 24 base64url characters. */
const PASSWORD_BYTES = 18;

/**
 * `stepwire users add|list|set-roles|disable|reset-password`.
 * @internal
 */
export async function usersCommand(args: string[], io: CliIo): Promise<number> {
  return withUsage(io, 'users', HELP, async () => {
    const [sub, ...rest] = args;
    if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help')
      return sub === undefined
        ? usage('missing subcommand: add, list, set-roles, disable or reset-password')
        : (io.out(HELP), EXIT.ok);
    switch (sub) {
      case 'add':
        return add(rest, io);
      case 'list':
        return list(rest, io);
      case 'set-roles':
        return setRoles(rest, io);
      case 'disable':
        return disable(rest, io);
      case 'reset-password':
        return resetPassword(rest, io);
      default:
        return usage(`unknown subcommand "${sub}": add, list, set-roles, disable or reset-password`);
    }
  });
}

async function add(args: string[], io: StdinIo): Promise<number> {
  const { values, help } = parseCommand(
    'users',
    args,
    {
      ...DATABASE_OPTIONS,
      email: { type: 'string' },
      roles: { type: 'string' },
      name: { type: 'string' },
      'password-stdin': { type: 'boolean' },
    },
    { min: 0, max: 0 },
  );
  if (help) return (io.out(HELP), EXIT.ok);
  if (typeof values['email'] !== 'string') return usage('--email is required');
  const roles = parseRoles(values['roles'], 'users');
  const given = values['password-stdin'] === true ? await readPassword(io) : undefined;
  const password = given ?? randomToken(PASSWORD_BYTES);
  const name = values['name'] as string | undefined;
  return withCredentialStores('users', values, async ({ users, audit }) => {
    const user = await users.create({
      email: values['email'] as string,
      roles,
      password,
      ...(name === undefined ? {} : { name }),
    });
    await audit({
      action: 'user.create',
      resource: `user:${user.id}`,
      detail: { email: user.email, roles: user.roles },
    });
    if (given !== undefined) io.out(`created user ${describeUser(user)}`);
    else printPassword(io, `created user ${describeUser(user)}`, password);
    return EXIT.ok;
  });
}

async function list(args: string[], io: CliIo): Promise<number> {
  const { values, help } = parseCommand(
    'users',
    args,
    { ...DATABASE_OPTIONS, json: { type: 'boolean' } },
    { min: 0, max: 0 },
  );
  if (help) return (io.out(HELP), EXIT.ok);
  return withCredentialStores('users', values, async ({ users }) => {
    const all = await users.list();
    if (values['json'] === true) io.out(JSON.stringify(all, null, 2));
    else if (all.length === 0)
      io.out('no users (add one with: stepwire users add --email EMAIL --roles ROLES)');
    else for (const user of all) io.out(describeUser(user));
    return EXIT.ok;
  });
}

async function setRoles(args: string[], io: CliIo): Promise<number> {
  const { values, positionals, help } = parseCommand('users', args, DATABASE_OPTIONS, { min: 2, max: 2 });
  if (help) return (io.out(HELP), EXIT.ok);
  const roles = parseRoles(positionals[1], 'users');
  return withCredentialStores('users', values, async ({ users, audit }) => {
    const user = await users.setRoles((await find(users, positionals[0]!)).id, roles);
    await audit({ action: 'user.set_roles', resource: `user:${user.id}`, detail: { roles: user.roles } });
    io.out(
      `${user.email}: ${describeRoles(user.roles)} (sessions already open keep their roles until they end)`,
    );
    return EXIT.ok;
  });
}

async function disable(args: string[], io: CliIo): Promise<number> {
  const { values, positionals, help } = parseCommand('users', args, DATABASE_OPTIONS, { min: 1, max: 1 });
  if (help) return (io.out(HELP), EXIT.ok);
  return withCredentialStores('users', values, async ({ users, sessions, audit }) => {
    const user = await users.disable((await find(users, positionals[0]!)).id);
    const ended = await sessions.endFor(user.id);
    await audit({ action: 'user.disable', resource: `user:${user.id}`, detail: { sessions_ended: ended } });
    io.out(`disabled ${user.email}; ${ended} session${ended === 1 ? '' : 's'} ended`);
    return EXIT.ok;
  });
}

async function resetPassword(args: string[], io: CliIo): Promise<number> {
  const { values, positionals, help } = parseCommand('users', args, DATABASE_OPTIONS, { min: 1, max: 1 });
  if (help) return (io.out(HELP), EXIT.ok);
  return withCredentialStores('users', values, async ({ users, sessions, audit }) => {
    const user = await find(users, positionals[0]!);
    const password = randomToken(PASSWORD_BYTES);
    await users.setPassword(user.id, password);
    const ended = await sessions.endFor(user.id);
    await audit({
      action: 'user.reset_password',
      resource: `user:${user.id}`,
      detail: { sessions_ended: ended },
    });
    printPassword(
      io,
      `new password for ${user.email}; ${ended} session${ended === 1 ? '' : 's'} ended`,
      password,
    );
    return EXIT.ok;
  });
}

/** The user with this e-mail address. @throws {@link NotFoundError} naming it. */
async function find(users: Users, email: string): Promise<User> {
  const user = await users.findByEmail(email);
  if (user === undefined) throw new NotFoundError('user', email.trim().toLowerCase());
  return user;
}

/** The password on standard output alone, what it is on standard error. */
function printPassword(io: CliIo, what: string, password: string): void {
  io.err(what);
  io.err(
    'The one-time password follows. It is shown this once and cannot be shown again: give it to the user now.',
  );
  io.out(password);
}

/** Standard input without its final line break. */
async function readPassword(io: StdinIo): Promise<string> {
  const text = io.stdin ? await io.stdin() : await readStdin();
  return text.replace(/\r?\n$/, '');
}

async function readStdin(): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Uint8Array);
  return new TextDecoder().decode(Buffer.concat(chunks));
}

function usage(message: string): never {
  throw new UsageError(message, 'users');
}

/** `ada@example.com "Ada" (<id>), roles a, b`, and `disabled` when it is. */
function describeUser(user: User): string {
  const name = user.name === undefined ? '' : ` "${user.name}"`;
  return `${user.email}${name} (${user.id}), ${describeRoles(user.roles)}${user.disabled ? ', disabled' : ''}`;
}
