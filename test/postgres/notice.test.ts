import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readNotice } from '../../src/adapters/postgres/queue.js';

/** A notification as the queue writes one: the head, then `}` or the events (and the record). */
function noticeOf(
  id: string,
  status: string | null,
  ready: number,
  carried?: { after: number; events: unknown[]; record?: object | undefined },
): string {
  const head = `{"o":"1a2b3c4d","r":${JSON.stringify(id)},"s":${JSON.stringify(status)},"j":${ready}`;
  if (!carried) return `${head}}`;
  const record = carried.record === undefined ? '' : `,"c":${JSON.stringify(carried.record)}`;
  return `${head},"b":${carried.after},"e":${JSON.stringify(carried.events)}${record}}`;
}

/** What the notification says, with its events read (plain data, for comparison). */
function read(payload: string) {
  const { runId, status, ready, logged } = readNotice(payload);
  return {
    runId,
    status,
    ready,
    logged: logged && { after: logged.after, events: logged.events, record: logged.record },
  };
}

describe('a notification read by its head (its events parsed only when a follower reads them)', () => {
  it('gives what the whole text says, for any run id, status, events and record', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary' }),
        fc.option(fc.constantFrom('running', 'succeeded', 'failed', 'waiting', 'odd "status" \\')),
        fc.nat(1000),
        fc.option(
          fc.record({
            after: fc.nat(100_000),
            events: fc.array(fc.jsonValue(), { maxLength: 4 }),
            record: fc.option(fc.dictionary(fc.string(), fc.jsonValue()), { nil: undefined }),
          }),
          { nil: undefined },
        ),
        (id, status, ready, carried) => {
          const payload = noticeOf(id, status, ready, carried);
          const whole = JSON.parse(payload) as { c?: object; e?: unknown[]; b?: number };
          expect(read(payload)).toEqual({
            runId: id,
            status: status ?? undefined,
            ready,
            logged: carried && {
              after: whole.b,
              events: whole.e,
              record: whole.c,
            },
          });
        },
      ),
    );
  });

  it('reads the head without parsing what follows it (read only when asked for)', () => {
    const payload = `${noticeOf('r1', 'running', 1, { after: 2, events: [] }).slice(0, -1)},"e":[oops}`;
    const { runId, status, ready, logged } = readNotice(payload);
    expect({ runId, status, ready }).toEqual({ runId: 'r1', status: 'running', ready: 1 });
    expect(() => logged!.events).toThrow(SyntaxError);
  });

  it('reads the record this process wrote in place of the one carried, once given', () => {
    const { logged } = readNotice(
      noticeOf('r1', 'succeeded', 0, { after: 3, events: [{ type: 'run.finished' }], record: { id: 'r1' } }),
    );
    logged!.record = { id: 'r1', status: 'succeeded' };
    expect(logged).toMatchObject({ after: 3, events: [{ type: 'run.finished' }] });
    expect(logged!.record).toEqual({ id: 'r1', status: 'succeeded' });
  });

  it('falls back to parsing the whole text when the head is in another order, and to the oldest form', () => {
    expect(readNotice('{"r":"r1","o":"x","j":2,"s":"running","b":4,"e":[1]}')).toEqual({
      runId: 'r1',
      status: 'running',
      ready: 2,
      logged: { after: 4, events: [1] },
    });
    expect(readNotice('r1 failed')).toEqual({ runId: 'r1', status: 'failed', ready: 1 });
  });
});
