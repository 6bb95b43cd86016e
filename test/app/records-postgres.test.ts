import { afterAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { handleScreenRoute } from '../../src/http/screens.js';
import { Engine, type ApplicationBody, type ResolvedForm } from '../../src/index.js';
import { shopEngine } from '../engine/helpers.js';
import { reachServer, testSchemas } from '../postgres/server.js';

const url = await reachServer();
const schemas = testSchemas(url);
afterAll(() => schemas.drop());

const app: ApplicationBody = {
  start_screen_url: 'customer',
  screens: [
    {
      url: 'customer',
      components: [
        [
          {
            name: 'remove',
            type: 'form',
            form: {
              form_items: [],
              job: {
                type: 'write',
                entity_name: 'customers',
                write_mode: 'delete',
                key: { id: '{{query_params.id}}' },
              },
              do: {
                type: 'redirect',
                redirect_data: { url: '/screens/customer?deleted={{output.written}}' },
              },
            },
          },
        ],
      ],
    },
  ],
};

describe.skipIf(url === undefined)('a delete form on Postgres storage', () => {
  it('deletes once when one rendered form is sent to two engines at once; both answers redirect alike', async () => {
    const db = await openPostgres(url!, { schema: schemas.next() });
    try {
      const { engine, spreadsheets } = await shopEngine({ storage: db.storage });
      await engine.catalog.delete('orders', [{ order_id: 13 }]);
      await engine.applications.put('crm', app);
      const other = new Engine({ storage: db.storage, spreadsheets });
      const screen = await (await engine.applications.open('crm')).screen('customer', { id: '3' });
      const token = (screen.rows[0]![0] as ResolvedForm).submission!;
      const post = (on: Engine) =>
        handleScreenRoute(
          on,
          new Request('http://localhost/applications/crm/screens/customer/forms/remove?id=3', {
            method: 'POST',
            body: `_submission=${token}`,
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
          }),
          { app: 'crm', screen: 'customer', form: 'remove' },
        );
      const answers = [...(await Promise.all([post(engine), post(other)])), await post(other)];
      for (const answer of answers) {
        expect(answer.status).toBe(303);
        expect(answer.headers.get('location')).toBe('/applications/crm/screens/customer?deleted=1');
      }
      expect(spreadsheets.cells('shop', 'customers')!.map((r) => r[0])).toEqual(['id', 1, 2]);
      await other.close();
      await engine.close();
    } finally {
      await db.close();
    }
  });
});
