/** Help text of `stepwire` and of each command. @internal */
export const HELP: Record<string, string> = {
  main: `Usage: stepwire <command> [options]

Runs a stepwire project folder (entities/, relationships/, workflows/, applications/,
scripts/, sheets/<spreadsheet_id>/<sheet_name>.csv). validate, types and graph work in
memory, and run is a dry run in memory unless given --db; serve and worker keep runs in
<dir>/.stepwire/db (or --db) and write entity rows to the sheet files (serve --memory keeps
everything in memory).

Commands:
  init <dir>                           write a starting project into a new or empty folder
  validate <dir>                       check every file; list each problem with file and path
  run <dir> <workflow> [--input JSON]  run a workflow, show its steps and print its output
  serve <dir> [--port N]               serve the HTTP API and the application screens
  worker <dir> [--db URL|DIR]          execute queued steps of durable runs (with serve --no-work)
  triggers <dir>                       list the project's triggers and when they fire next
  types <dir> [--out FILE]             TypeScript types of each workflow's input and output
  graph <dir> <workflow> [--out FILE]  the workflow as an SVG picture
  mcp <dir> [--key KEY]                the workflows as tools for an AI agent (MCP over stdio)
  init-access <dir> --email E | --key  a starting access policy and the first admin (sign-in)
  keys create|list|revoke              API keys for programs (Authorization: Bearer)
  users add|list|set-roles|disable|reset-password  people who sign in with a password

Options:
  -h, --help     show help (also after a command: stepwire run --help)
  -v, --version  show the version

Exit codes: 0 ok, 1 failure (invalid project, failed run), 2 usage error.`,

  init: `Usage: stepwire init <dir>

Writes a starting project into <dir> (created when missing; an existing folder must be
empty, so nothing is overwritten): stepwire.json, an entity with its CSV sheet, a workflow
that appends a row, and an application screen with a form and a grid. Then run
"stepwire validate <dir>", "stepwire run <dir> add_contact --input '{...}'" or
"stepwire serve <dir>".

Exit codes: 0 written, 2 usage error (the folder is not empty).`,

  validate: `Usage: stepwire validate <dir>

Loads the project folder and checks every definition, script and CSV sheet, then reads
every entity once. Prints each problem as "<file>: <path>: <message>".

Exit codes: 0 valid, 1 problems found, 2 usage error.`,

  run: `Usage: stepwire run <dir> <workflow> [--input JSON] [--out DIR] [--db URL|DIR] [--schema NAME]
                    [--files DIR] [--public-url URL] [--sandbox NAME]

Runs a workflow of the project and prints a line per step as it finishes and a
timeline of the run at its end, then the output as JSON on standard output. Files
the run stores in the "memory" file store are written to --out.

Without --db it is a dry run: entity rows are copies of sheets/ in memory and no sheet
file changes. With --db the run is recorded in that database and its writes land in
the files of sheets/, as "stepwire serve" writes them; the files it stores are kept in
the database, where "stepwire serve" serves them under /files/.

Options:
  -i, --input JSON  the workflow input, e.g. '{"customer_id":1}', or @file.json
  -o, --out DIR     where stored files are written (default: ./out)
      --db URL|DIR  keep definitions and the run record in this database (a
                    postgres:// URL or a folder, embedded) and write entity rows to
                    the files of sheets/; default: a dry run in memory
      --schema NAME the Postgres schema of the project's tables, with --db
                    (default: stepwire)
      --files DIR   keep stored files in this folder (one "stepwire serve --files"
                    shares) instead of the database or memory
      --public-url URL  the public URL of "stepwire serve", which file links start
                    with (default: stepwire.json's publicUrl, else links are /files/...)
      --sandbox NAME where scripts run: quickjs (QuickJS in worker threads, the
                    default) or isolated-vm (V8 isolates in child processes, several
                    times faster; needs npm install isolated-vm)
  -h, --help        show this help

Exit codes: 0 succeeded, 1 failed (or invalid project or input), 2 usage error.`,

  triggers: `Usage: stepwire triggers <dir>

Lists the triggers of the project (triggers/*.json): a schedule with its cron, time zone
and next fire time, a webhook with its path, an entity trigger with its events and interval.
stepwire serve runs them.

Exit codes: 0 ok, 1 invalid project, 2 usage error.`,

  serve: `Usage: stepwire serve <dir> [--port N] [--host ADDRESS] [--public-url URL] [--out DIR]
                      [--db URL|DIR | --memory] [--files DIR] [--concurrency N] [--no-work]
                      [--sandbox NAME]

Serves the HTTP API of the project and its application screens, logging each request.
Stored files are served under /files/ (and written to --out when given): they are kept in
the database, shared with every "stepwire worker" on it (or in --files DIR). Definitions and
runs are kept in a database (by default <dir>/.stepwire/db) and entity rows in the files
of <dir>/sheets, so both survive a restart. Runs are durable: their steps are queued in the
database and executed here and by any "stepwire worker" on it; a run cut short by a stop
goes on at the next start. Stop with Ctrl-C (or SIGTERM): steps in flight finish first.
With <dir>/access.json (stepwire init-access) every request needs sign-in (the /sign-in
page, or an API key); without one the server is open and listens on loopback only.

Options:
  -p, --port N      port to listen on; 0 picks a free one (default: 8787)
      --host ADDR   address to listen on (default: 127.0.0.1); another than loopback
                    only with an access policy; answers loopback names, this address and
                    the --public-url host
      --public-url URL  the address clients reach this server at, e.g.
                    https://flows.example.com: every link (file URLs, app and hook
                    addresses) starts with it (default: the listen address, with
                    127.0.0.1 for 0.0.0.0)
  -o, --out DIR     also write stored files into this folder
      --db URL|DIR  the database: a postgres:// URL or a folder (embedded PGlite)
      --schema NAME the Postgres schema of the project's tables (default: stepwire)
      --memory      keep everything in memory and leave the files alone
      --files DIR   keep stored files in this folder (shared by every process)
                    instead of the database
      --concurrency N  steps executed here at once, 1 to 256 (default: 4)
      --no-work     only queue runs; "stepwire worker" processes execute them
      --sandbox NAME  where scripts run: quickjs (QuickJS in worker threads, the
                    default) or isolated-vm (V8 isolates in child processes, several
                    times faster; needs npm install isolated-vm)
  -h, --help        show this help

Exit codes: 0 stopped, 1 invalid project or port in use, 2 usage error.`,

  worker: `Usage: stepwire worker <dir> [--db URL|DIR] [--schema NAME] [--concurrency N] [--no-triggers]
                       [--public-url URL] [--files DIR] [--sandbox NAME]

Executes the steps of durable runs queued in the database, and fires the project's
triggers (each schedule slot and row change starts one run, whatever the number of
workers). Run as many as you like beside "stepwire serve --no-work": each step runs
once; a worker killed mid-step loses only that step, which another worker takes over
once its lease lapses. Stop with Ctrl-C or SIGTERM: no step starts, the steps in
flight finish and commit, then the worker exits. Files its steps store are kept in the
database (or --files DIR), where "stepwire serve" serves them under /files/; give the
worker the public URL serve has, so that their links are full addresses.

Options:
      --db URL|DIR       the database: a postgres:// URL (shared by every process) or a
                         folder (embedded PGlite, one process); default <dir>/.stepwire/db
      --schema NAME      the Postgres schema of the project's tables (default: stepwire)
  -c, --concurrency N    steps executed at once, 1 to 256 (default: 4)
      --no-triggers      leave the triggers to other processes
      --public-url URL   the public URL of "stepwire serve", which file links start
                         with (default: stepwire.json's publicUrl, else links are
                         /files/<name>, a path on the server)
      --files DIR        keep stored files in this folder (the one serve --files has)
                         instead of the database
      --sandbox NAME     where scripts run: quickjs (QuickJS in worker threads, the
                         default) or isolated-vm (V8 isolates in child processes, several
                         times faster; needs npm install isolated-vm)
  -h, --help             show this help

Exit codes: 0 stopped, 1 invalid project or database, 2 usage error.`,

  types: `Usage: stepwire types <dir> [--out FILE]

Writes TypeScript types of each workflow's input (from workflow_input.input_schema) and
output (from workflow_output.output_data; "unknown" where a value cannot be derived).
Needs the json-schema-to-typescript package.

Options:
  -o, --out FILE  write to FILE instead of standard output
  -h, --help      show this help

Exit codes: 0 ok, 1 invalid project, 2 usage error.`,

  graph: `Usage: stepwire graph <dir> <workflow> [--out FILE]

Draws a workflow of the project as an SVG picture: its steps in dependency order,
wires, references, conditions and for_each sources as arrows. For example:
  stepwire graph examples/invoices invoice > graph.svg

Options:
  -o, --out FILE  write to FILE instead of standard output
  -h, --help      show this help

Exit codes: 0 ok, 1 invalid project or no such workflow, 2 usage error.`,

  mcp: `Usage: stepwire mcp <dir> [--key KEY] [--db URL|DIR | --memory] [--timeout SECONDS]
                    [--public-url URL] [--files DIR] [--sandbox NAME]

Serves the project to an AI agent as a Model Context Protocol server over standard input
and output (the client starts this command; see docs/mcp.md for its configuration): a
tool per workflow (the workflow's input schema; the run's output as the result, a failed
run as an error naming the step), read_entity (the get_entity input), get_run, and the
entity definitions as resources. Standard output carries only the protocol; messages go
to standard error. It stops when the client closes standard input.

Who it acts as: the API key given with --key or in STEPWIRE_API_KEY (made with
"stepwire keys create"), with that key's roles: the tools are the workflows the key may
run, read_entity sees the rows its role's rules let it see. Without a key it acts as the
project's own service, which may do everything (as "stepwire run" does); give a key to
an agent that should do less.

Definitions and run records are kept in the database, as "stepwire serve" keeps them
(by default <dir>/.stepwire/db, which one process opens at a time: give --db a
postgres:// URL to share it with a running serve, or use serve's /mcp instead), and
entity rows in the files of <dir>/sheets; --memory keeps everything in memory.

Options:
      --key KEY       act as this API key (default: the STEPWIRE_API_KEY variable, else
                      the project's service)
      --db URL|DIR    the database: a postgres:// URL or a folder (embedded PGlite)
      --schema NAME   the Postgres schema of the project's tables (default: stepwire)
      --memory        keep everything in memory and leave the files alone
      --timeout SECONDS  how long a tool call waits for its run (default: 50); a run
                      still going then (or waiting for a person) is answered with its
                      run id and status, and goes on
      --public-url URL  the address of the project's "stepwire serve": links to
                      files and runs start with it
      --files DIR     keep stored files in this folder (one "stepwire serve --files"
                      shares) instead of the database
      --sandbox NAME  where scripts run: quickjs (the default) or isolated-vm
  -h, --help          show this help

Exit codes: 0 the client closed the connection, 1 invalid project or key, 2 usage error.`,
};
