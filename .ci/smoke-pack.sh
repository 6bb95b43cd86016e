#!/usr/bin/env bash
# Installs the packed tarball into an empty folder and imports and requires every subpath.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tarball="$(cd "$root" && npm pack --silent --pack-destination "$work" | tail -n 1)"
cd "$work"
npm init -y >/dev/null
npm install --no-audit --no-fund "./$tarball" >/dev/null
subpaths="stepwire stepwire/http stepwire/google stepwire/node stepwire/testing"
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
