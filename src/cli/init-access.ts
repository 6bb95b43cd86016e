/**
 * `stepwire init-access <dir>`: a starting access policy (`access.json`) and the first admin, so a
 * team goes from an open project to a signed-in admin in two commands.
 * @module
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomToken } from '../auth/tokens.js';
import type { AccessPolicy } from '../schema/access.js';
import { EXIT, UsageError, parseCommand, type CliIo } from './io.js';
import { DATABASE_HELP, DATABASE_OPTIONS, withCredentialStores, withUsage } from './keys.js';

const HELP = `Usage: stepwire init-access <dir> (--email EMAIL | --key) [--db URL|DIR]

Writes <dir>/access.json, a starting access policy with three roles (admin: everything;
editor: definitions, rows and runs; user: the screens, reading rows, running workflows,
their own runs), and the first admin in the project's database: with --email, a user
whose one-time password is printed once on standard output; with --key, an API key whose
secret is printed once. Then "stepwire serve <dir>" needs sign-in, and may listen beyond
loopback (--host) with --public-url. access.json is never overwritten.

Options:
      --email EMAIL  the first admin is a person who signs in with this address
      --key          the first admin is an API key (for a program)
${DATABASE_HELP.replace('  -d, --dir DIR      the project folder whose database to use (default: .)\n', '')}

Exit codes: 0 ok, 1 failure (access.json exists, e-mail invalid), 2 usage error.`;

/** The policy `init-access` writes: roles to start from, no row or column rules yet. */
export const STARTING_POLICY: AccessPolicy = {
  roles: {
    admin: { grants: ['*'] },
    editor: {
      grants: [
        'definitions.read',
        'definitions.write',
        'entity.read',
        'entity.write',
        'workflow.run',
        'runs.read',
        'runs.cancel',
        'runs.retry',
        'app.use',
      ],
    },
    user: { grants: ['app.use', 'entity.read', 'workflow.run', 'runs.read_own'] },
  },
  rows: [],
  columns: [],
};

/** Bytes of the printed one-time password: 24 base64url characters. */
const PASSWORD_BYTES = 18;

/**
 * `stepwire init-access <dir>`.
 * @internal
 */
export async function initAccessCommand(args: string[], io: CliIo): Promise<number> {
  return withUsage(io, 'init-access', HELP, async () => {
    const { values, positionals, help } = parseCommand(
      'init-access',
      args,
      { ...DATABASE_OPTIONS, email: { type: 'string' }, key: { type: 'boolean' } },
      { min: 1, max: 1 },
    );
    if (help) return (io.out(HELP), EXIT.ok);
    const dir = positionals[0]!;
    const email = values['email'] as string | undefined;
    if ((email === undefined) === (values['key'] !== true))
      throw new UsageError(
        'give the first admin: --email EMAIL (a person) or --key (a program), one of them',
        'init-access',
      );
    const file = join(dir, 'access.json');
    return withCredentialStores('init-access', { ...values, dir }, async (stores) => {
      // Written first, only if absent: an existing policy is never replaced.
      try {
        await writeFile(file, `${JSON.stringify(STARTING_POLICY, null, 2)}\n`, { flag: 'wx' });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        io.err(`stepwire init-access: ${file} exists; edit it, or remove it to start again`);
        return EXIT.failure;
      }
      io.err(`wrote ${file}: roles admin, editor and user`);
      if (email !== undefined) {
        const password = randomToken(PASSWORD_BYTES);
        const user = await stores.users.create({ email, roles: ['admin'], password });
        await stores.audit({
          action: 'user.create',
          resource: `user:${user.email}`,
          detail: { roles: ['admin'] },
        });
        io.err(`admin ${user.email} created; their password, shown this once:`);
        io.out(password);
      } else {
        const key = await stores.keys.create({ name: 'first admin', roles: ['admin'] });
        await stores.audit({ action: 'key.create', resource: `key:${key.id}`, detail: { roles: ['admin'] } });
        io.err(`admin API key ${key.id} created; its secret, shown this once (Authorization: Bearer ...):`);
        io.out(key.secret);
      }
      io.err(`next: stepwire serve ${dir} (sign in at /sign-in)`);
      return EXIT.ok;
    });
  });
}
