import { z } from 'zod';
import type { PostgresDatabase } from '../../src/adapters/postgres/index.js';
import { Engine } from '../../src/index.js';

/**
 * A durable engine on `db` with workflow `name`: one step, `hold`, whose action holds its worker slot
 * until its signal aborts (then it fails).
 */
export async function heldStepEngine(db: PostgresDatabase, name: string): Promise<Engine> {
  const engine = new Engine({
    storage: db.storage,
    queue: db.queue,
    actions: [
      {
        provider: 'acme',
        module: 'test',
        action: 'hold',
        input: z.object({}),
        run: (_input, context) =>
          new Promise((_, reject) =>
            context.signal.addEventListener('abort', () => reject(new Error('let go'))),
          ),
      },
    ],
  });
  await engine.workflows.create({
    name,
    steps: [
      {
        name: 'hold',
        type: 'l2',
        l2_data: { provider: 'acme', module: 'test', action: 'hold', input_data: {} },
      },
    ],
    wires: [],
  });
  return engine;
}
