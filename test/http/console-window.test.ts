// The console's runs page filtered by start time (`since` included, `until` not) over 2,000 stored
// runs: a window half-way back shows its newest 50 runs at once, the "Older runs" links go through
// exactly the runs of the window, and the counts by status are of the window.
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { Engine, MemoryStorage } from '../../src/index.js';

const ORIGIN = 'http://127.0.0.1:8787';
const HTML = { accept: 'text/html' };
const T0 = Date.parse('2026-02-01T00:00:00.000Z');
const MINUTE = 60_000;

const listed = (html: string) =>
  [...html.matchAll(/<tr><td><a href="\/console\/runs\/([^"]+)"/g)].map((m) => decodeURIComponent(m[1]!));

describe('the console runs page in a time window', () => {
  it('lists exactly the runs started in the window, 50 a page, and counts only those', async () => {
    const storage = new MemoryStorage();
    const runs: { id: string; at: number; status: string }[] = [];
    for (let i = 0; i < 2000; i++) {
      const at = T0 + i * MINUTE;
      const status = i % 10 === 0 ? 'failed' : 'succeeded';
      const id = `run-${String(i).padStart(4, '0')}`;
      runs.push({ id, at, status });
      const started_at = new Date(at).toISOString();
      await storage.put('runs', id, {
        id,
        workflow: 'w',
        status,
        input: {},
        steps: [],
        started_at,
        finished_at: started_at,
      });
    }
    const engine = new Engine({ storage });
    const handler = createHandler(engine);
    const get = async (path: string) => {
      const answer = await handler(new Request(`${ORIGIN}${path}`, { headers: HTML }));
      expect(answer.status).toBe(200);
      return answer.text();
    };
    // 1,000 to 1,120 minutes in: 120 runs, 12 failed; the run at the end is not in the window.
    const since = new Date(T0 + 1000 * MINUTE).toISOString();
    const until = new Date(T0 + 1120 * MINUTE).toISOString();
    const want = runs
      .filter((run) => run.at >= T0 + 1000 * MINUTE && run.at < T0 + 1120 * MINUTE)
      .reverse()
      .map((run) => run.id);
    let html = await get(`/console/runs?${new URLSearchParams({ since, until })}`);
    expect(listed(html)).toEqual(want.slice(0, 50));
    expect(html).toContain('>failed: 12<');
    expect(html).toContain('>succeeded: 108<');
    expect(html).toContain('started in that time');
    const seen = listed(html);
    for (
      let next = /rel="next" href="([^"]+)"/.exec(html);
      next;
      next = /rel="next" href="([^"]+)"/.exec(html)
    ) {
      html = await get(next[1]!.replaceAll('&amp;', '&'));
      seen.push(...listed(html));
    }
    expect(seen).toEqual(want);
    // With the status, and a date alone (midnight UTC) as the end.
    const failed = await get(`/console/runs?status=failed&since=${since}&until=2026-02-02`);
    expect(listed(failed)).toEqual(
      runs
        .filter(
          (run) => run.status === 'failed' && run.at >= T0 + 1000 * MINUTE && run.at < T0 + 1440 * MINUTE,
        )
        .reverse()
        .map((run) => run.id),
    );
    // A bound that is no time (or past year 9999) is said not to be used.
    const bad = await get('/console/runs?until=%2B010000-01-01T00:00:00Z');
    expect(bad).toContain('Not used: until must be a date');
    expect(listed(bad)).toHaveLength(50);
    await engine.close();
  });
});
