/**
 * `stepwire init <dir>`: a starting project a new user can validate, run and serve at once.
 * @module
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { HELP } from './help.js';
import { EXIT, UsageError, parseCommand, type CliIo } from './io.js';

/** The files of a new project, by path: an entity with its sheet, a workflow that adds a row, a screen. */
const FILES: Record<string, unknown> = {
  'stepwire.json': { $schema: 'https://unpkg.com/stepwire/schemas/project-settings.json', allowHosts: [] },
  'entities/contacts.json': {
    $schema: 'https://unpkg.com/stepwire/schemas/entity.json',
    name: 'contacts',
    description: 'People to keep in touch with',
    columns: [
      { name: 'id', type: 'NUMBER' },
      { name: 'name', type: 'STRING' },
      { name: 'email', type: 'STRING' },
    ],
    primary_key: ['id'],
    spreadsheet_config: { spreadsheet_id: 'book', sheet_name: 'contacts', origin: { row: 0, col: 0 } },
  },
  'workflows/add_contact.json': {
    $schema: 'https://unpkg.com/stepwire/schemas/workflow.json',
    name: 'add_contact',
    description: 'Adds one contact: the input becomes a row of the contacts sheet',
    steps: [
      {
        name: 'save',
        type: 'l2',
        l2_data: {
          provider: 'catalog',
          module: 'action',
          action: 'write_entity',
          input_data: {
            entity_name: 'contacts',
            write_mode: 'append',
            rows: [{ id: '{{input.id}}', name: '{{input.name}}', email: '{{input.email}}' }],
          },
        },
      },
    ],
    wires: [],
    workflow_input: {
      name: 'input',
      input_schema: {
        type: 'object',
        properties: {
          id: { type: 'integer', minimum: 1 },
          name: { type: 'string', minLength: 1 },
          email: { type: 'string' },
        },
        required: ['id', 'name'],
      },
    },
    workflow_output: { name: 'output', output_data: { id: '{{input.id}}', written: '{{save.written}}' } },
  },
  'applications/contacts.json': {
    $schema: 'https://unpkg.com/stepwire/schemas/application.json',
    start_screen_url: 'start',
    screens: [
      {
        url: 'start',
        components: [
          [{ name: 'title', type: 'text', formatting: {}, text: { contents: 'Contacts', type: 'heading' } }],
          [
            {
              name: 'add',
              type: 'form',
              formatting: {},
              form: {
                form_items: [
                  {
                    label: 'Id',
                    name: 'id',
                    type: 'number',
                    required: true,
                    number_config: { min: 1, step: 1 },
                  },
                  { label: 'Name', name: 'name', type: 'text', required: true },
                  { label: 'E-mail', name: 'email', type: 'text' },
                ],
                job: { type: 'sync', workflow_name: 'add_contact' },
                do: { type: 'redirect', redirect_data: { url: '/screens/start?added={{output.id}}' } },
              },
            },
          ],
          [{ name: 'list', type: 'datagrid', formatting: {}, datagrid: { entity_name: 'contacts' } }],
        ],
      },
    ],
  },
};

const SHEET = 'id,name,email\n1,Ada Lovelace,ada@example.com\n';

const README = `# A stepwire project

- \`entities/contacts.json\`: the contacts entity; its rows are in \`sheets/book/contacts.csv\`.
- \`workflows/add_contact.json\`: a workflow that appends one contact.
- \`applications/contacts.json\`: a screen with a form that runs it and a grid of the contacts.
- \`stepwire.json\`: settings (hosts request steps may reach, limits, the public URL).

\`\`\`sh
npx stepwire validate .
npx stepwire run . add_contact --input '{"id":2,"name":"Grace Hopper"}'          # a dry run: no file changes
npx stepwire serve .                                                               # http://127.0.0.1:8787
\`\`\`
`;

/**
 * `stepwire init <dir>`: writes a starting project into `dir` (created when missing; an existing
 * folder must be empty, so nothing is ever overwritten) and prints what to run next.
 * @internal
 */
export async function initCommand(args: string[], io: CliIo): Promise<number> {
  const { positionals, help } = parseCommand('init', args, {}, { min: 1, max: 1 });
  if (help) return (io.out(HELP['init']!), EXIT.ok);
  const dir = positionals[0]!;
  const present = await readdir(dir).catch((error: { code?: string }) => {
    if (error.code === 'ENOENT') return [];
    if (error.code === 'ENOTDIR') throw new UsageError(`${dir} is a file, not a folder`, 'init');
    throw error;
  });
  if (present.length > 0)
    throw new UsageError(
      `${dir} is not empty: give a new or empty folder, so nothing is overwritten`,
      'init',
    );
  const files: [string, string][] = [
    ...Object.entries(FILES).map(([path, body]): [string, string] => [
      path,
      `${JSON.stringify(body, null, 2)}\n`,
    ]),
    ['sheets/book/contacts.csv', SHEET],
    ['README.md', README],
  ];
  for (const [path, text] of files) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text, { flag: 'wx' });
  }
  io.out(`Created a stepwire project in ${dir}:`);
  for (const [path] of files) io.out(`  ${path}`);
  io.out('');
  io.out('Next:');
  io.out(`  stepwire validate ${dir}`);
  io.out(`  stepwire run ${dir} add_contact --input '{"id":2,"name":"Grace Hopper"}'`);
  io.out(`  stepwire serve ${dir}`);
  return EXIT.ok;
}
