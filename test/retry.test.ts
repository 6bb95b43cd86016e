import { describe, expect, it } from 'vitest';
import { backoffDelay, normalizeRetry, parseRetryAfter, withRetry } from '../src/retry/index.js';
import { CancelledError } from '../src/errors/index.js';

describe('retry helpers', () => {
  const policy = normalizeRetry({ attempts: 5, baseMs: 100, capMs: 1000 });

  it('defaults to 5 attempts, 500 ms base, 30 s cap', () => {
    expect(normalizeRetry(undefined)).toEqual({ attempts: 5, baseMs: 500, capMs: 30_000 });
  });

  it('uses full jitter below an exponential ceiling capped at capMs', () => {
    expect(backoffDelay(1, policy, undefined, () => 0)).toBe(0);
    expect(backoffDelay(1, policy, undefined, () => 0.999)).toBe(99);
    expect(backoffDelay(3, policy, undefined, () => 0.5)).toBe(200);
    expect(backoffDelay(10, policy, undefined, () => 0.999)).toBe(999);
  });

  it('honours Retry-After, capped at capMs', () => {
    expect(backoffDelay(1, policy, 300)).toBe(300);
    expect(backoffDelay(1, policy, 60_000)).toBe(1000);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:05 GMT', now)).toBe(5000);
  });

  it('reads decimal seconds and the three HTTP date formats, and refuses every other shape', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('1.5', now)).toBe(1500);
    expect(parseRetryAfter(' 0.25 ', now)).toBe(250);
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('Wednesday, 01-Jan-25 00:00:02 GMT', now)).toBe(2000);
    expect(parseRetryAfter('Wed Jan  1 00:00:03 2025', now)).toBe(3000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now)).toBe(0);
    for (const shape of ['-1', '1e3', '0x10', '1.', '.5', '2025-01-01', 'Wed, 01 Jan 2025', 'soon', ''])
      expect(parseRetryAfter(shape, now), shape).toBeUndefined();
  });

  it('stops after the attempts and throws the last error', async () => {
    let calls = 0;
    const run = withRetry(
      async () => {
        calls++;
        throw new Error(`fail ${calls}`);
      },
      { policy: { attempts: 3, baseMs: 1, capMs: 1 }, classify: () => ({ retry: true }) },
    );
    await expect(run).rejects.toThrow('fail 3');
    expect(calls).toBe(3);
  });

  it('does not retry what classify refuses', async () => {
    let calls = 0;
    const run = withRetry(
      async () => {
        calls++;
        throw new Error('bad request');
      },
      { policy: { attempts: 3, baseMs: 1, capMs: 1 }, classify: () => ({ retry: false }) },
    );
    await expect(run).rejects.toThrow('bad request');
    expect(calls).toBe(1);
  });

  it('rejects with CancelledError when aborted while waiting', async () => {
    const controller = new AbortController();
    const run = withRetry(
      async () => {
        setTimeout(() => controller.abort(), 10);
        throw new Error('x');
      },
      {
        policy: { attempts: 3, baseMs: 60_000, capMs: 60_000 },
        classify: () => ({ retry: true }),
        signal: controller.signal,
      },
    );
    await expect(run).rejects.toBeInstanceOf(CancelledError);
  });
});
