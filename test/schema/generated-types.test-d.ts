import { describe, it } from 'vitest';
import type { Application } from '../../types/application.js';
import type { Entity } from '../../types/entity.js';
import type { GetEntityInput } from '../../types/get-entity-input.js';
import type { Workflow } from '../../types/workflow.js';

describe('generated types', () => {
  it('accept spec bodies', () => {
    void ({
      name: 'customers',
      columns: [{ name: 'id', type: 'NUMBER' }],
      primary_key: ['id'],
      spreadsheet_config: { spreadsheet_id: 's', sheet_name: 'S', origin: { row: 0, col: 0 } },
    } satisfies Entity);
    void ({
      name: 'w',
      steps: [{ name: 'a', type: 'l2', l2_data: { provider: 'p', module: 'm', action: 'x' } }],
      wires: [],
    } satisfies Workflow);
    void ({
      screens: [{ url: 'home', components: [[{ name: 't', type: 'text', text: { contents: 'Hi' } }]] }],
      start_screen_url: 'home',
    } satisfies Application);
  });

  it('reject what the schemas reject', () => {
    // @ts-expect-error a column type that is not allowed
    const type: Entity['columns'][number]['type'] = 'TEXT';
    // @ts-expect-error get_entity input allows no other property
    const input: GetEntityInput = { entity_name: 'e', operation: {}, limit: 3 };
    // @ts-expect-error lowercase direction
    const direction: NonNullable<GetEntityInput['operation']['order_by']>[number]['direction'] = 'asc';
    void [type, input, direction];
  });
});
