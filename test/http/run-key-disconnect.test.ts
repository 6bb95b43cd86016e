import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createHandler } from '../../src/http/index.js';
import { Engine } from '../../src/index.js';

async function slowEngine() {
  const engine = new Engine();
  engine.actions.register({
    provider: 'test',
    module: 'clock',
    action: 'wait',
    input: z.object({}).passthrough(),
    run: async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return { done: true };
    },
  });
  await engine.workflows.create({
    name: 'slow',
    steps: [
      {
        name: 'wait',
        type: 'l2',
        l2_data: { provider: 'test', module: 'clock', action: 'wait', input_data: {} },
      },
    ],
    wires: [],
  });
  return { engine, handler: createHandler(engine) };
}

/** Starts a run and goes away after 30 ms, as a client whose timeout fired. */
async function startAndLeave(
  handler: (request: Request) => Promise<Response>,
  headers: Record<string, string>,
) {
  const leave = new AbortController();
  const answer = handler(
    new Request('http://localhost/workflows/slow/runs', {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json', ...headers },
      signal: leave.signal,
    }),
  );
  setTimeout(() => leave.abort(), 30);
  await answer;
}

describe('a client that goes away from POST /workflows/{name}/runs', () => {
  it('with an Idempotency-Key: the run goes on, and the key sent again answers it succeeded, run once', async () => {
    const { engine, handler } = await slowEngine();
    await startAndLeave(handler, { 'idempotency-key': 'order-7' });
    const again = await handler(
      new Request('http://localhost/workflows/slow/runs', {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'order-7' },
      }),
    );
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const record = (await again.json()) as { status: string; output: unknown };
    expect(record).toMatchObject({ status: 'succeeded', output: { wait: { done: true } } });
    expect((await engine.listRuns({})).runs).toHaveLength(1);
  });

  it('without one: the run is cancelled, as before', async () => {
    const { engine, handler } = await slowEngine();
    await startAndLeave(handler, {});
    await expect
      .poll(async () => (await engine.listRuns({})).runs.map((run) => run.status))
      .toEqual(['cancelled']);
  });
});
