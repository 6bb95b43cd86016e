import { describe, expect, it } from 'vitest';
import { runTimelineSvg, runTimelineText, workflowGraphSvg } from '../../src/index.js';
import { clock, failedRun, runningRun } from './runs.js';
import { byClass, fullText, parseXml } from './xml.js';

describe('runTimelineSvg', () => {
  it('draws a bar per step, coloured by status, longer as the step took longer', () => {
    const svg = parseXml(runTimelineSvg(failedRun()));
    const bars = byClass(svg, 'rect', 'bar');
    expect(bars).toHaveLength(5);
    expect(byClass(svg, 'g', 'step').map((g) => g.attributes['data-status'])).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
      'failed',
      'skipped',
    ]);
    expect(bars.map((b) => b.attributes['fill'])).toEqual([
      '#1a7f37',
      '#1a7f37',
      '#1a7f37',
      '#cf222e',
      '#8c959f',
    ]);
    const [customer, orders, pdf, upload] = bars.map((b) => ({
      x: Number(b.attributes['x']),
      w: Number(b.attributes['width']),
    }));
    // 40, 80, 500 and 680 ms of a 1300 ms run, on one scale; each starts where its step started.
    expect(orders!.w / customer!.w).toBeCloseTo(2, 1);
    expect(pdf!.w / customer!.w).toBeCloseTo(12.5, 0);
    expect(upload!.x).toBeGreaterThan(pdf!.x + pdf!.w);
  });

  it('writes durations, attempts and the failing step’s error, as text', () => {
    const svg = parseXml(runTimelineSvg(failedRun()));
    expect(byClass(svg, 'text', 'info').map(fullText)).toEqual([
      'succeeded · 40 ms',
      'succeeded · 80 ms',
      'succeeded · 500 ms',
      'failed · 680 ms · 3 attempts',
      'skipped',
    ]);
    expect(byClass(svg, 'text', 'step-error').map(fullText)).toEqual([
      'step "upload" failed: the store is <full> & "closed"',
    ]);
    expect(fullText(byClass(svg, 'text', 'run-status')[0]!)).toBe(
      'failed · 1.3 s · started 2025-01-01T00:00:00.000Z',
    );
  });

  it('draws a run that goes on up to now, so a reload shows it move', () => {
    const early = parseXml(runTimelineSvg(runningRun(), { now: clock(1000) }));
    const later = parseXml(runTimelineSvg(runningRun(), { now: clock(2000) }));
    const info = (svg: typeof early) => byClass(svg, 'text', 'info').map(fullText);
    expect(info(early)).toEqual(['succeeded · 40 ms', 'running · 940 ms so far']);
    expect(info(later)).toEqual(['succeeded · 40 ms', 'running · 1.9 s so far']);
    const width = (svg: typeof early) => Number(byClass(svg, 'rect', 'bar')[0]!.attributes['width']);
    // The finished step takes a smaller share of a longer run.
    expect(width(later)).toBeLessThan(width(early));
  });

  it('shows a for_each step’s items by outcome, and a run error that belongs to no step', () => {
    const record = failedRun();
    record.steps = [
      {
        ...record.steps[0]!,
        attempts: 1002,
        items: { total: 1000, succeeded: 997, failed: 3, skipped: 0, failures: [] },
      },
    ];
    record.error = { code: 'interrupted', message: 'the engine running this run stopped' };
    const svg = parseXml(runTimelineSvg(record));
    expect(byClass(svg, 'text', 'info').map(fullText)).toEqual([
      'succeeded · 40 ms · items: 997 ok, 3 failed · 2 retries',
    ]);
    const groups = byClass(svg, 'rect', 'item-group');
    expect(groups.map((g) => [g.attributes['data-status'], g.children[0]!.text])).toEqual([
      ['succeeded', '997 of 1000 items succeeded'],
      ['failed', '3 of 1000 items failed'],
    ]);
    // Under the step's bar, as wide as it, split by count (a sliver is still 1 px wide).
    const bar = byClass(svg, 'rect', 'bar')[0]!;
    const [ok, failed] = groups.map((g) => Number(g.attributes['width']));
    expect(groups[0]!.attributes['x']).toBe(bar.attributes['x']);
    expect(ok!).toBeCloseTo((Number(bar.attributes['width']) * 997) / 1000, 0);
    expect(failed!).toBe(1);
    expect(byClass(svg, 'text', 'run-error').map(fullText)).toEqual([
      'interrupted: the engine running this run stopped',
    ]);
  });
});

describe('runTimelineText', () => {
  it('prints a line per step on one time scale, with the error under the failed step', () => {
    expect(runTimelineText(failedRun(), { width: 26 }).split('\n')).toEqual([
      'timeline of run run-7: failed in 1.3 s',
      '  customer  █                           succeeded · 40 ms',
      '  orders    ██                          succeeded · 80 ms',
      '  pdf         ██████████                succeeded · 500 ms',
      '  upload                ██████████████  failed · 680 ms · 3 attempts',
      '            ✗ step "upload" failed: the store is <full> & "closed"',
      '  notify                             ·  skipped',
    ]);
  });
});

describe('timelines of records whose times do not parse', () => {
  it('draw at once, with no NaN, whatever the record or now holds', () => {
    const broken = { ...failedRun(), started_at: 'yesterday' };
    broken.steps[1] = { ...broken.steps[1]!, finished_at: 'soon' };
    const running = runningRun();
    for (const [record, now] of [
      [broken, undefined],
      [running, Number.NaN],
      [running, Number.POSITIVE_INFINITY],
      [running, new Date('not a date')],
      [running, 'later' as unknown as number],
    ] as const) {
      const started = performance.now();
      const svg = runTimelineSvg(record, now === undefined ? {} : { now });
      const text = runTimelineText(record, now === undefined ? {} : { now });
      expect(performance.now() - started).toBeLessThan(1000);
      expect(svg).not.toContain('NaN');
      expect(text).not.toContain('NaN');
      expect(byClass(parseXml(svg), 'g', 'step')).toHaveLength(record.steps.length);
    }
  });
});

describe('runTimelineText on a terminal', () => {
  it('writes control characters of names and messages as escapes, so no text can drive the terminal', () => {
    const record = failedRun();
    record.steps[0] = { ...record.steps[0]!, name: 'a\u001b[2Jb' };
    record.steps[3] = {
      ...record.steps[3]!,
      error: { code: 'x', message: 'bad\r\n✓ forged line\u009b31m' },
    };
    const text = runTimelineText(record);
    // eslint-disable-next-line no-control-regex -- the characters that must not reach the terminal
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(text).toContain('a\\u001b[2Jb');
    expect(text).toContain('✗ bad\\u000d\\u000a✓ forged line\\u009b31m');
    expect(text.split('\n')).toHaveLength(runTimelineText(failedRun()).split('\n').length);
  });
});

describe('pictures refuse what is no run record or workflow, naming the argument', () => {
  it('throws a TypeError naming the function and what it got, instead of failing inside', () => {
    const run = failedRun();
    const bad: unknown[] = [
      undefined,
      {},
      { steps: 'x' },
      { steps: [null] },
      { steps: [] },
      { ...run, steps: [{ ...run.steps[0], name: 7 }] },
      { ...run, steps: [{ ...run.steps[0], error: {} }] },
    ];
    for (const value of bad) {
      expect(() => runTimelineText(value as never)).toThrow(/^runTimelineText needs a run record: /);
      expect(() => runTimelineSvg(value as never)).toThrow(/^runTimelineSvg needs a run record: /);
    }
    for (const value of [undefined, {}, { steps: [null] }, { steps: [{ name: 'a' }], wires: [null, 1] }])
      expect(() => workflowGraphSvg(value as never)).toThrow(/^workflowGraphSvg needs a workflow/);
    expect(() => runTimelineText(run, { width: 'x' as never })).toThrow(
      'runTimelineText: options.width must be a number from 1 to 1000, got the string "x"',
    );
    expect(() => runTimelineText(run, { width: 1e9 })).toThrow(
      /options\.width must be a number from 1 to 1000/,
    );
    // A narrow width still draws (at least 10 columns).
    expect(runTimelineText(failedRun(), { width: 3 })).toContain('timeline of run');
  });
});
