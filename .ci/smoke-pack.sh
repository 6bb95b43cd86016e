#!/usr/bin/env bash
# Installs the packed tarball into an empty folder and imports and requires every subpath.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tarball="$(cd "$root" && npm pack --silent --pack-destination "$work" | tail -n 1)"
cd "$work"
echo "smoke test of the packed tarball on Node $(node --version)"
npm init -y >/dev/null
# stepwire/testing runs under vitest, an optional peer: install it as a user of that entry would.
npm install --no-audit --no-fund "./$tarball" vitest@^4 >/dev/null
subpaths="stepwire stepwire/schema stepwire/http stepwire/google stepwire/node stepwire/postgres stepwire/mcp stepwire/testing"
for sub in $subpaths; do
  node --input-type=module -e "const m = await import('$sub'); if (Object.keys(m).length === 0) throw new Error('$sub exports nothing'); console.log('import  $sub:', Object.keys(m).length, 'exports');"
  node -e "const m = require('$sub'); if (Object.keys(m).length === 0) throw new Error('$sub exports nothing'); console.log('require $sub:', Object.keys(m).length, 'exports');"
done
node --input-type=module -e "
import { Engine, MemorySpreadsheets } from 'stepwire';
const engine = new Engine({ spreadsheets: new MemorySpreadsheets({ s: { t: [['id'], [1], [2]] } }) });
await engine.catalog.registerEntity({ name: 'e', columns: [{ name: 'id', type: 'NUMBER' }], primary_key: ['id'], spreadsheet_config: { spreadsheet_id: 's', sheet_name: 't', origin: { row: 0, col: 0 } } });
const out = await engine.catalog.getEntity({ entity_name: 'e', operation: {} });
if (out.body.table.rows?.length !== 2) throw new Error('smoke read failed: ' + JSON.stringify(out));
console.log('smoke engine read ok');
"
# The worker-thread sandbox finds its worker file inside the installed package, from ESM and CJS.
sandbox_check='const input = { source: "writeEntity(\"out\", getEntity(\"in\").map((r) => ({ n: r.n * 2 })))", inputs: { in: { columns: [{ name: "n", type: "NUMBER" }], rows: [[1], [2]] } }, outputs: ["out"], limits: { timeoutMs: 5000, memoryBytes: 64 * 1024 * 1024, stackBytes: 1024 * 1024, maxOutputBytes: 1024 * 1024 } };
const sandbox = new WorkerSandbox();
sandbox.run(input).then((result) => { if (JSON.stringify(result.writes.out) !== "[{\"n\":2},{\"n\":4}]") throw new Error("sandbox gave " + JSON.stringify(result)); console.log(sandbox.constructor.name + " ok"); return sandbox.close(); });'
node --input-type=module -e "import { WorkerSandbox } from 'stepwire/node'; $sandbox_check"
node -e "const { WorkerSandbox } = require('stepwire/node'); $sandbox_check"
# The V8-isolate sandbox finds its child process's file inside the installed package too, once the
# optional peer isolated-vm is installed (its prebuilt binary; no compiler needed).
npm install --no-audit --no-fund isolated-vm@6.2.0 >/dev/null
node --input-type=module -e "import { IsolatedVmSandbox } from 'stepwire/node'; ${sandbox_check//WorkerSandbox/IsolatedVmSandbox}"
node -e "const { IsolatedVmSandbox } = require('stepwire/node'); ${sandbox_check//WorkerSandbox/IsolatedVmSandbox}"
npx --no-install stepwire --version
# The declarations type-check as a TypeScript user compiles against them, ESM and CommonJS, under
# moduleResolution node16 with the libraries' own declarations checked too (skipLibCheck off).
cat > check.mts <<'TS'
import { Engine } from 'stepwire';
import { createClient, createHandler } from 'stepwire/http';
import { GoogleSheets } from 'stepwire/google';
import { FileSpreadsheets } from 'stepwire/node';
import { openPostgres } from 'stepwire/postgres';
import { describeStorageContract } from 'stepwire/testing';
export const used = [Engine, createClient, createHandler, GoogleSheets, FileSpreadsheets, openPostgres, describeStorageContract];
TS
# stepwire/testing is left out of CommonJS: it runs under vitest, which is ESM only.
grep -v 'stepwire/testing' check.mts | sed 's/, describeStorageContract//' > check.cts
cat > tsconfig.json <<JSON
{
  "compilerOptions": {
    "module": "node16", "moduleResolution": "node16", "target": "es2022", "lib": ["esnext", "dom"],
    "strict": true, "noEmit": true, "skipLibCheck": false,
    "typeRoots": ["$root/node_modules/@types"], "types": ["node"]
  },
  "files": ["check.mts", "check.cts"]
}
JSON
node "$root/node_modules/typescript/bin/tsc" -p tsconfig.json
echo "declarations type-check (node16, ESM and CJS)"
