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
  return answer;
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

  it('without one: the run goes on too, and ends succeeded; only POST /runs/{id}/cancel cancels', async () => {
    const { engine, handler } = await slowEngine();
    const answer = await startAndLeave(handler, {});
    // The answer stopped waiting when the client left, long before the run's 200 ms.
    expect(answer.status).toBe(202);
    const { run_id } = (await answer.json()) as { run_id: string };
    expect((await engine.getRun(run_id)).status).toBe('running');
    await expect
      .poll(async () => (await engine.listRuns({})).runs.map((run) => run.status))
      .toEqual(['succeeded']);
  });

  it('POST /runs/{id}/cancel cancels a run a client left', async () => {
    const { engine, handler } = await slowEngine();
    const { run_id } = (await (await startAndLeave(handler, {})).json()) as { run_id: string };
    const cancel = await handler(new Request(`http://localhost/runs/${run_id}/cancel`, { method: 'POST' }));
    expect(await cancel.json()).toEqual({ cancelled: true });
    await expect.poll(async () => (await engine.getRun(run_id)).status).toBe('cancelled');
  });
});
