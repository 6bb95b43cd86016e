import { z } from 'zod';
import { Engine, MemorySpreadsheets } from '../../src/index.js';

/**
 * An engine over one sheet, `book`/`<entity>` (a NUMBER key `id` and a STRING column), with entity
 * `<entity>` keyed by `id` and a workflow `flow` whose one step notes the input of each run in `seen`
 * (the trigger tests read what their runs got there). `inputSchema` is the workflow's, when given.
 */
export async function notingEngine(
  entity: string,
  column: string,
  rows: (string | number)[][],
  inputSchema?: Record<string, unknown>,
) {
  const spreadsheets = new MemorySpreadsheets({ book: { [entity]: [['id', column], ...rows] } });
  const engine = new Engine({ spreadsheets });
  const seen: unknown[] = [];
  engine.actions.register({
    provider: 'test',
    module: 'triggers',
    action: 'note',
    input: z.looseObject({}),
    run: (input) => (seen.push((input as { got: unknown }).got), input),
  });
  await engine.catalog.registerEntity({
    name: entity,
    columns: [
      { name: 'id', type: 'NUMBER' },
      { name: column, type: 'STRING' },
    ],
    primary_key: ['id'],
    spreadsheet_config: { spreadsheet_id: 'book', sheet_name: entity, origin: { row: 0, col: 0 } },
  });
  await engine.workflows.create({
    name: 'flow',
    steps: [
      {
        name: 'note',
        type: 'l2',
        l2_data: { provider: 'test', module: 'triggers', action: 'note', input_data: { got: '{{input}}' } },
      },
    ],
    wires: [],
    ...(inputSchema === undefined ? {} : { workflow_input: { name: 'input', input_schema: inputSchema } }),
  });
  return { engine, spreadsheets, seen };
}
