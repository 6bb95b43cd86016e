// Charts and metrics as a person sees them: an SVG image with a name and a table of the same
// values beside it (hostile labels escaped in both), one big formatted number under its label,
// errors said plainly; and the checks of their configs when the application is stored.
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { Engine, MemorySpreadsheets, isValidationError, type ApplicationBody } from '../../src/index.js';
import { all, attr, hasClass, one, text, within } from './grid-dom.js';

const HOSTILE = '<script>alert(1)</script>"&';

const salesEntity = {
  name: 'sales',
  columns: [
    { name: 'id', type: 'NUMBER' as const },
    { name: 'month', type: 'STRING' as const },
    { name: 'amount', type: 'NUMBER' as const },
    { name: 'open', type: 'BOOLEAN' as const },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'sales', origin: { row: 0, col: 0 } },
};

const BY_MONTH = {
  group_by: ['month'],
  aggregates: [
    { function: 'sum' as const, column: 'amount', alias: 'total' },
    { function: 'count' as const, alias: 'orders' },
  ],
  order_by: [{ column: 'month', direction: 'ASC' as const }],
};

function app(kind: 'bar' | 'line' | 'pie', extra: Record<string, unknown> = {}): ApplicationBody {
  return {
    start_screen_url: 'dash',
    screens: [
      {
        url: 'dash',
        components: [
          [
            {
              name: 'sales_chart',
              type: 'chart',
              chart: {
                kind,
                title: 'Sales by month',
                entity_name: 'sales',
                operation: BY_MONTH,
                x: 'month',
                y: 'total',
                format: { locale: 'en-US', style: 'currency', currency: 'USD' },
                ...extra,
              },
            },
            {
              name: 'open_count',
              type: 'metric',
              metric: {
                label: 'Open invoices',
                entity_name: 'sales',
                operation: {
                  filters: [{ column: 'open', operator: 'EQUALS', value: true }],
                  aggregates: [{ function: 'count', alias: 'n' }],
                },
                value: 'n',
              },
            },
          ],
        ],
      },
    ],
  };
}

async function dash(kind: 'bar' | 'line' | 'pie', extra?: Record<string, unknown>) {
  const spreadsheets = new MemorySpreadsheets({
    shop: {
      sales: [
        ['id', 'month', 'amount', 'open'],
        [1, '2026-01', 100, true],
        [2, '2026-01', 50.5, false],
        [3, '2026-02', 300, true],
        [4, HOSTILE, 20, true],
        [5, '2026-03', 0, false],
      ],
    },
  });
  const engine = new Engine({ spreadsheets });
  await engine.catalog.registerEntity(salesEntity);
  await engine.applications.put('shop', app(kind, extra));
  const response = await createHandler(engine)(
    new Request('http://localhost/applications/shop/screens/dash'),
  );
  expect(response.status).toBe(200);
  return { engine, html: await response.text() };
}

describe('chart', () => {
  for (const kind of ['bar', 'line', 'pie'] as const)
    it(`draws a ${kind} chart as a named SVG image with a table of its values beside it`, async () => {
      const { html } = await dash(kind);
      const svg = one(html, 'svg');
      expect(attr(svg, 'role')).toBe('img');
      const name = `${kind === 'bar' ? 'Bar' : kind === 'line' ? 'Line' : 'Pie'} chart: Sales by month, 4 values of total by month; the table beside it lists them.`;
      expect(attr(svg, 'aria-label')).toBe(name);
      expect(text(within(svg, 'title')[0]!)).toBe(name);
      expect(text(one(html, 'figcaption'))).toBe('Sales by month');
      const table = one(html, 'table');
      expect(within(table, 'th', (th) => attr(th, 'scope') === 'col').map(text)).toEqual(['month', 'total']);
      expect(
        within(table, 'tr')
          .slice(1)
          .map((tr) => [text(within(tr, 'th')[0]!), text(within(tr, 'td')[0]!)]),
      ).toEqual([
        ['2026-01', '$150.50'],
        ['2026-02', '$300.00'],
        ['2026-03', '$0.00'],
        [HOSTILE, '$20.00'],
      ]);
      // The hostile label is text everywhere: no script element, none in the SVG.
      expect(all(html, 'script').length).toBe(0);
      expect(html).not.toContain('<script>alert(1)');
      const marks = within(svg, kind === 'bar' ? 'rect' : kind === 'line' ? 'circle' : 'path');
      // A pie has no slice for 0; a bar of 0 and a point at 0 are drawn.
      expect(marks.length).toBe(kind === 'pie' ? 3 : 4);
      expect(marks.map((m) => text(within(m, 'title')[0]!))).toContain(
        kind === 'pie' ? `${HOSTILE}: $20.00 (4%)` : `${HOSTILE}: $20.00`,
      );
      if (kind === 'bar') {
        // Taller bar, larger value: 300 is twice the height of 150.50, roughly.
        const heights = marks.map((m) => Number(attr(m, 'height')));
        expect(heights[1]! / heights[0]!).toBeCloseTo(300 / 150.5, 1);
      }
    });

  it('says plainly when its read fails or has nothing to show', async () => {
    const { html } = await dash('bar', {
      operation: { ...BY_MONTH, filters: [{ column: 'amount', operator: 'GREATER_THAN', value: 1000 }] },
    });
    expect(text(one(html, 'figure', hasClass('c-chart')))).toBe(
      'Sales by monthThere is nothing to show here yet.',
    );
    const spreadsheets = new MemorySpreadsheets({ shop: { sales: [['id', 'month', 'amount', 'open']] } });
    const engine = new Engine({ spreadsheets });
    await engine.catalog.registerEntity(salesEntity);
    await engine.applications.put('shop', app('line'));
    // The entity changes after the app was stored: the chart says so, the screen still shows.
    await engine.catalog.upsertEntity({
      ...salesEntity,
      columns: salesEntity.columns.filter((c) => c.name !== 'amount'),
    });
    const response = await createHandler(engine)(
      new Request('http://localhost/applications/shop/screens/dash'),
    );
    const page = await response.text();
    expect(response.status).toBe(200);
    expect(text(one(page, 'p', (p) => attr(p, 'role') === 'alert'))).toBe('This could not be read.');
  });
});

describe('metric', () => {
  it('shows one big number under its label, formatted', async () => {
    const { html } = await dash('bar');
    const metric = one(html, 'div', hasClass('c-metric'));
    expect(text(within(metric, 'dt')[0]!)).toBe('Open invoices');
    expect(text(within(metric, 'dd', hasClass('metric-value'))[0]!)).toBe('3');
  });
});

describe('chart and metric checks when an application is stored', () => {
  it('names the unknown entity, the unknown columns and a bad format', async () => {
    const { engine } = await dash('bar');
    const bad = app('bar', {
      operation: {
        group_by: ['mnth'],
        aggregates: [{ function: 'sum', column: 'amt', alias: 'total' }],
        filters: [{ column: 'nope', operator: 'EQUALS', value: 1 }],
      },
      x: 'mnth',
      format: { style: 'currency' },
    }) as any;
    bad.screens[0].components[0][1].metric.entity_name = 'missing';
    const error = await engine.applications.put('shop', bad).catch((e: unknown) => e);
    expect(isValidationError(error)).toBe(true);
    const issues = (error as { issues: { code: string; path: string }[] }).issues.map((i) => [
      i.code,
      i.path,
    ]);
    const at = 'screens[0].components[0]';
    expect(issues).toEqual([
      ['unknown_column', `${at}[0].chart.operation.filters[0].column`],
      ['unknown_column', `${at}[0].chart.operation.group_by[0]`],
      ['unknown_column', `${at}[0].chart.operation.aggregates[0].column`],
      ['invalid_value', `${at}[0].chart.format`],
      ['unknown_entity', `${at}[1].metric.entity_name`],
    ]);
  });
});
