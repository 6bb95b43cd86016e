import { expect, it } from 'vitest';
import { z } from 'zod';
import { Engine } from '../../src/index.js';

it('engine.cancel stops a run of this engine, says false once it ended, and names a run that does not exist', async () => {
  const engine = new Engine();
  engine.actions.register({
    provider: 'acme',
    module: 'test',
    action: 'sleep',
    input: z.object({}),
    run: (_input, context) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, 10_000);
        context.signal.addEventListener('abort', () => (clearTimeout(timer), reject(new Error('stopped'))));
      }),
  });
  await engine.workflows.create({
    name: 'slow',
    steps: [
      {
        name: 'sleep',
        type: 'l2',
        l2_data: { provider: 'acme', module: 'test', action: 'sleep', input_data: {} },
      },
    ],
    wires: [],
  });
  const handle = await engine.start('slow', {});
  for await (const event of handle.events) if (event.type === 'step.started') break;
  expect(await engine.cancel(handle.id)).toBe(true);
  const record = await handle.result;
  expect(record.status).toBe('cancelled');
  expect(record.error).toMatchObject({ code: 'cancelled' });
  expect(await engine.cancel(handle.id)).toBe(false);
  await expect(engine.cancel('no-such-run')).rejects.toMatchObject({ name: 'NotFoundError' });
});
