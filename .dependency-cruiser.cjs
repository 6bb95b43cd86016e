/**
 * The layering of src/, checked by `test/architecture.test.ts` (dependency-cruiser). Written from the
 * architecture's one-way order, not from the code: a lower layer never imports a higher one, type-only
 * imports included, and nothing imports in a circle.
 *
 *   errors, retry, bytes, locks                foundation: no domain
 *   schema                                     shapes of every resource
 *   adapters/types.ts, adapters/content-type   the adapter contract
 *   builders, query, catalog, computed, script, pdf, request, json-schema, pictures
 *   actions, app                               reached by the engine through narrow interfaces they define
 *   engine                                     (and adapters/memory, its defaults)
 *   http                                       edge-safe handler and client
 *   node, cli                                  Node-only composition: project folders, serve, the CLI
 *
 * Adapter implementations depend only on the contract, schema and the foundation (the worker sandbox
 * also on script, whose interface it implements). testing sees the public API.
 */
const FOUNDATION = '^src/(errors|retry|bytes|locks)/';
const SCHEMA = '^src/schema/';
const CONTRACT = '^src/adapters/[^/]+\\.ts$';
const BELOW_ENGINE = '^src/(builders|query|catalog|computed|script|pdf|request|json-schema|pictures)/';
const PLUGINS = '^src/(actions|app)/';
const ENGINE = '^src/engine/';
const HTTP = '^src/http/';
const ADAPTER_IMPL = '^src/adapters/(memory|chat|google|node|postgres)/';
const NODE_ONLY = '^src/(node|cli|adapters/node|adapters/google|adapters/postgres)/';
const ENTRIES = '^src/(index|schema-entry)\\.ts$';

/** A rule: files matching `from` may not import files matching `to`. */
const forbid = (name, comment, from, to) => ({
  name,
  comment,
  severity: 'error',
  from: { path: from },
  to: { path: to },
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Imports never go in a circle, type-only imports included.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    forbid(
      'foundation-stays-below',
      'errors, retry and bytes know nothing of the domain.',
      FOUNDATION,
      `^src/(?!errors/|retry/|bytes/|locks/)`,
    ),
    forbid(
      'schema-stays-below',
      'schema depends only on the foundation.',
      SCHEMA,
      `^src/(?!errors/|retry/|bytes/|locks/|schema/)`,
    ),
    forbid(
      'contract-stays-below',
      'The adapter contract depends only on schema and the foundation.',
      CONTRACT,
      `^src/(?!errors/|retry/|bytes/|locks/|schema/|adapters/[^/]+\\.ts$)`,
    ),
    forbid(
      'below-engine',
      'builders, query, catalog, computed, script, pdf, request, json-schema and pictures never reach up.',
      BELOW_ENGINE,
      `${PLUGINS}|${ENGINE}|${HTTP}|${ADAPTER_IMPL}|^src/(node|cli|testing)/|${ENTRIES}`,
    ),
    forbid(
      'plugins-below-engine',
      'Built-in actions and applications reach the engine only through the interfaces they define.',
      PLUGINS,
      `${ENGINE}|${HTTP}|${ADAPTER_IMPL}|^src/(node|cli|testing)/|${ENTRIES}`,
    ),
    forbid(
      'actions-apart-from-app',
      'Actions and applications do not know each other.',
      '^src/actions/',
      '^src/app/',
    ),
    forbid(
      'app-apart-from-actions',
      'Actions and applications do not know each other.',
      '^src/app/',
      '^src/actions/',
    ),
    forbid(
      'engine-below-http',
      'The engine knows nothing of HTTP, Node or the test kit; of the adapters, only its in-memory defaults.',
      ENGINE,
      `${HTTP}|^src/adapters/(chat|google|node|postgres)/|^src/(node|cli|testing)/|${ENTRIES}`,
    ),
    forbid(
      'http-is-edge-safe',
      'The HTTP handler and client run on edge runtimes: no Node-only code, no test kit.',
      HTTP,
      `${NODE_ONLY}|^src/testing/|${ENTRIES}`,
    ),
    forbid(
      'adapters-on-the-contract',
      'Adapter implementations depend on the contract, schema and the foundation only.',
      '^src/adapters/(memory|chat|google|postgres)/',
      `${BELOW_ENGINE}|${PLUGINS}|${ENGINE}|${HTTP}|^src/(node|cli|testing)/|${ENTRIES}`,
    ),
    forbid(
      'node-adapters-on-the-contract',
      'Node adapters depend on the contract (the worker sandbox also on script, which it implements).',
      '^src/adapters/node/',
      `^src/(builders|query|catalog|pdf|request|json-schema|pictures)/|${PLUGINS}|${ENGINE}|${HTTP}|^src/(node|cli|testing)/|${ENTRIES}`,
    ),
    forbid(
      'adapters-apart',
      'One adapter family never imports another.',
      '^src/adapters/(memory|chat|google|node|postgres)/',
      '^src/adapters/(?!$1/)(memory|chat|google|node|postgres)/',
    ),
    forbid('node-not-from-cli', 'Node composition does not depend on the CLI.', '^src/node/', '^src/cli/'),
    forbid('nothing-on-testing', 'Only tests use the test kit.', '^src/(?!testing/)', '^src/testing/'),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
