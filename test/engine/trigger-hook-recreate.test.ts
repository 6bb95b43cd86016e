import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/index.js';
import { createHandler } from '../../src/http/index.js';
import { call } from '../http/helpers.js';
import { settle } from './settle.js';

describe('a webhook trigger deleted and created again under its name', () => {
  it('starts afresh: an Idempotency-Key the deleted trigger used starts a new run', async () => {
    const engine = new Engine();
    await engine.workflows.create({
      name: 'w',
      steps: [
        {
          name: 'd',
          type: 'l2',
          l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: {} },
        },
      ],
      wires: [],
    });
    const handler = createHandler(engine);
    const deliver = () => call(handler, 'POST', '/hooks/h', { n: 1 }, { 'idempotency-key': 'delivery-42' });
    await engine.triggers.create({
      name: 'h',
      type: 'webhook',
      workflow_name: 'w',
      input_data: { tag: 'old' },
    });
    const first = await deliver();
    expect(first.status).toBe(202);
    expect((await deliver()).body).toEqual(first.body); // the same delivery again: the same run
    await engine.triggers.delete('h');
    await new Promise((resolve) => setTimeout(resolve, 5)); // a later created_at
    await engine.triggers.create({
      name: 'h',
      type: 'webhook',
      workflow_name: 'w',
      input_data: { tag: 'new' },
    });
    const again = await deliver();
    expect(again.status).toBe(202);
    expect(again.body.run_id).not.toBe(first.body.run_id);
    const replayed = await deliver();
    expect(replayed).toMatchObject({ status: 200, body: { run_id: again.body.run_id } });
    await settle(engine);
    expect((await engine.getRun(again.body.run_id)).input).toEqual({ tag: 'new', n: 1 });
    expect((await engine.getRun(first.body.run_id)).input).toEqual({ tag: 'old', n: 1 });
  });
});
