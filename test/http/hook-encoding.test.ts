import { createHmac } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { Engine } from '../../src/index.js';

const SECRET = 'a-secret-of-twenty-chars';

describe('a signed webhook call with a Content-Encoding', () => {
  it('is signed over the JSON bytes as decoded, not over the compressed bytes', async () => {
    const engine = new Engine();
    await engine.workflows.create({ name: 'echo', steps: [], wires: [] });
    await engine.triggers.create({
      name: 'hook',
      type: 'webhook',
      workflow_name: 'echo',
      webhook_data: { secret: SECRET },
    });
    const handler = createHandler(engine);
    const json = '{"order":7}';
    const sign = (bytes: string | Uint8Array) =>
      `sha256=${createHmac('sha256', SECRET).update(bytes).digest('hex')}`;
    const post = (signature: string) =>
      handler(
        new Request('http://localhost/hooks/hook', {
          method: 'POST',
          body: gzipSync(json),
          headers: {
            'content-type': 'application/json',
            'content-encoding': 'gzip',
            'x-stepwire-signature': signature,
          },
        }),
      );
    const overCompressed = await post(sign(gzipSync(json)));
    expect(overCompressed.status).toBe(401);
    expect((await engine.listRuns({})).runs).toEqual([]);
    const overJson = await post(sign(json));
    expect(overJson.status).toBe(202);
    const { run_id } = (await overJson.json()) as { run_id: string };
    await expect.poll(async () => (await engine.getRun(run_id)).input).toEqual({ order: 7 });
  });
});
