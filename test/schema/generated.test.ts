import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { check } from '../../src/schema/index.js';
import { generate, jsonSchemaOf, RESOURCES, ROOT } from '../../scripts/generate-schemas.js';

const STALE = 'is stale: run `npm run generate` and commit the result';

describe('generated JSON Schemas and types', () => {
  it('the committed schemas/ and types/ files match the zod schemas', async () => {
    const files = await generate();
    expect([...files.keys()].sort()).toEqual(
      RESOURCES.flatMap((r) => [`schemas/${r.file}.json`, `types/${r.file}.d.ts`]).sort(),
    );
    for (const [path, expected] of files) {
      const committed = await readFile(join(ROOT, path), 'utf8').catch(() => undefined);
      expect(committed, `${path} is missing: run \`npm run generate\``).toBeDefined();
      expect(committed === expected, `${path} ${STALE}`).toBe(true);
    }
  }, 60_000);

  it('every schema has $id, title and the 2020-12 dialect', () => {
    const ids = new Set<string>();
    for (const resource of RESOURCES) {
      const schema = jsonSchemaOf(resource);
      expect(schema['$schema']).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(schema['title']).toBe(resource.title);
      expect(String(schema['$id'])).toMatch(new RegExp(`/schemas/${resource.file}\\.json$`));
      ids.add(String(schema['$id']));
    }
    expect(ids.size).toBe(RESOURCES.length);
  });

  it('keeps the spec rules that JSON Schema can express', () => {
    const byFile = new Map(RESOURCES.map((r) => [r.file, jsonSchemaOf(r)]));
    const getEntity = JSON.stringify(byFile.get('get-entity-input'));
    // SPEC 4.2: no other properties at any level: top, operation, and each item of its lists (the three of the spec, and aggregates).
    expect(getEntity.match(/"additionalProperties":false/g)).toHaveLength(6);
    const entity = byFile.get('entity') as { required: string[] };
    expect(entity.required).toEqual(
      expect.arrayContaining(['name', 'columns', 'primary_key', 'spreadsheet_config']),
    );
  });

  it('each resource schema still validates in zod (the generator reads the same objects)', () => {
    for (const resource of RESOURCES) expect(check(resource.schema, undefined).ok).toBe(false);
  });
});
