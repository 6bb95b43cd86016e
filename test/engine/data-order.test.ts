import { describe, expect, it } from 'vitest';
import {
  Engine,
  MemorySpreadsheets,
  ValidationError,
  type EntityBody,
  type Workflow,
} from '../../src/index.js';
import { workflowGraphSvg } from '../../src/pictures/index.js';

const notes = {
  name: 'notes',
  description: 'Notes',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'text', type: 'STRING' },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'book', sheet_name: 'notes', origin: { row: 0, col: 0 } },
} satisfies EntityBody;

async function engineWithNotes() {
  const engine = new Engine({
    spreadsheets: new MemorySpreadsheets({
      book: {
        notes: [
          ['id', 'text'],
          [1, 'first'],
        ],
      },
    }),
  });
  await engine.catalog.registerEntity(notes);
  return engine;
}

const l2 = (name: string, action: string, input_data: Record<string, unknown>) => ({
  name,
  type: 'l2' as const,
  l2_data: { provider: 'catalog', module: 'action', action, input_data },
});

/** A write of `notes`, then a read of it listed after, with nothing that ties the two. */
const writeThenRead: Workflow = {
  name: 'write_then_read',
  steps: [
    l2('add', 'write_entity', {
      entity_name: 'notes',
      write_mode: 'append',
      rows: [{ id: 2, text: 'second' }],
    }),
    l2('list', 'get_entity', { entity_name: 'notes', operation: {} }),
  ],
  wires: [],
  workflow_output: { name: 'output', output_data: { rows: '{{list.body.table.rows}}' } },
};

describe('data order: a read of an entity runs after the writes of it listed before it', () => {
  it('the read sees the row the earlier write appended', async () => {
    const engine = await engineWithNotes();
    await engine.workflows.create(writeThenRead);
    for (let i = 0; i < 5; i++) {
      const fresh = await engineWithNotes();
      await fresh.workflows.create(writeThenRead);
      const run = await fresh.run('write_then_read');
      expect(run.status, run.error?.message).toBe('succeeded');
      expect(run.output).toEqual({
        rows: [
          [1, 'first'],
          [2, 'second'],
        ],
      });
    }
  });

  it('a write listed after the read does not hold it back, and a writer that reads the reader makes no cycle', async () => {
    const engine = await engineWithNotes();
    const readFirst: Workflow = {
      name: 'read_first',
      steps: [
        l2('list', 'get_entity', { entity_name: 'notes', operation: {} }),
        l2('add', 'write_entity', {
          entity_name: 'notes',
          write_mode: 'append',
          rows: [{ id: 7, text: 'after {{list.body.table.rows.length}} rows' }],
        }),
      ],
      wires: [],
      workflow_output: { name: 'output', output_data: { rows: '{{list.body.table.rows}}' } },
    };
    await engine.workflows.create(readFirst);
    const run = await engine.run('read_first');
    expect(run.status, run.error?.message).toBe('succeeded');
    expect(run.output).toEqual({ rows: [[1, 'first']] });

    // The writer is listed first but reads the reader's output: the references decide, no cycle.
    const tangled: Workflow = {
      name: 'tangled',
      steps: [
        l2('add', 'write_entity', {
          entity_name: 'notes',
          write_mode: 'append',
          rows: [{ id: 9, text: '{{list.body.table.rows.length}}' }],
        }),
        l2('list', 'get_entity', { entity_name: 'notes', operation: {} }),
      ],
      wires: [],
    };
    await expect(engine.workflows.create(tangled)).resolves.toBeDefined();
  });

  it('the wire target "after" orders two steps without moving data', async () => {
    const engine = new Engine();
    const dummy = (name: string, input_data: Record<string, unknown>) => ({
      name,
      type: 'l2' as const,
      l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data },
    });
    await engine.workflows.create({
      name: 'ordered',
      steps: [dummy('second', { y: 2 }), dummy('first', { x: 1 })],
      wires: [{ source_name: 'first', target_name: 'second', target_data_path: 'after' }],
    });
    const started: string[] = [];
    const run = await engine.run(
      'ordered',
      {},
      {
        onEvent: (event) => {
          if (event.type === 'step.started') started.push(event.step);
        },
      },
    );
    expect(run.status).toBe('succeeded');
    expect(started).toEqual(['first', 'second']);
    expect(run.output).toEqual({ first: { x: 1 }, second: { y: 2 } });
    // An order wire that closes a loop is a cycle like any other.
    await expect(
      engine.workflows.create({
        name: 'loop',
        steps: [dummy('a', {}), dummy('b', { v: '{{a.v}}' })],
        wires: [{ source_name: 'b', target_name: 'a', target_data_path: 'after' }],
      }),
    ).rejects.toBeInstanceOf(ValidationError);
  });

  it('the graph draws the data order and the order wire', () => {
    const svg = workflowGraphSvg(writeThenRead);
    expect(svg).toContain('edge edge-order');
    expect(svg).toContain('writes notes first');
  });
});
