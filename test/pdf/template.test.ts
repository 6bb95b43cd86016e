import { describe, expect } from 'vitest';
import { ValidationError } from '../../src/errors/index.js';
import { renderPdf, type PdfVariable } from '../../src/pdf/index.js';
import { decimalSum } from '../../src/pdf/value-format.js';
import { itWithPoppler, pdfText, textLines } from './poppler.js';
import { it } from 'vitest';

async function lines(template: string, variables: PdfVariable[] = []): Promise<string[]> {
  return textLines(pdfText(await renderPdf({ template, variables })));
}

async function issues(promise: Promise<unknown>): Promise<ValidationError['issues']> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  return (error as ValidationError).issues;
}

const LINES: PdfVariable = {
  name: 'lines',
  value_type: 'TABLE',
  value: {
    columns: [{ name: 'Item' }, { name: 'Unit price', type: 'number' }],
    rows: [
      ['Tea', 0.1],
      ['Cake', 0.2],
    ],
  },
};

describe('create_pdf templates (mustache with [[ ]])', () => {
  itWithPoppler('repeats a section over a LIST and over TABLE rows (cells by column name)', async () => {
    const out = await lines(
      '<ul>[[#people]]<li>[[name]] ([[address.city]])</li>[[/people]]</ul>' +
        '[[#lines]]<p>[[Item]] costs [[Unit price]]</p>[[/lines]]',
      [
        {
          name: 'people',
          value_type: 'LIST',
          value: [
            { name: 'Ada', address: { city: 'London' } },
            { name: 'Grace', address: { city: 'New York' } },
          ],
        },
        LINES,
      ],
    );
    expect(out).toEqual(['• Ada (London)', '• Grace (New York)', 'Tea costs 0.1', 'Cake costs 0.2']);
  });

  itWithPoppler(
    'shows an inverted section when a value is empty, dotted names reach into an OBJECT',
    async () => {
      const template =
        '<p>[[customer.name]] of [[customer.address.city]]</p>[[^notes]]<p>No notes.</p>[[/notes]][[#paid]]<p>Paid</p>[[/paid]][[^paid]]<p>Due</p>[[/paid]]';
      const customer: PdfVariable = {
        name: 'customer',
        value_type: 'OBJECT',
        value: { name: 'ACME', address: { city: 'Oslo' } },
      };
      expect(
        await lines(template, [
          customer,
          { name: 'notes', value_type: 'LIST', value: [] },
          { name: 'paid', value_type: 'BOOLEAN', value: false },
        ]),
      ).toEqual(['ACME of Oslo', 'No notes.', 'Due']);
      expect(
        await lines(template, [
          customer,
          { name: 'notes', value_type: 'LIST', value: [{ text: 'x' }] },
          { name: 'paid', value_type: 'BOOLEAN', value: true },
        ]),
      ).toEqual(['ACME of Oslo', 'Paid']);
    },
  );

  itWithPoppler(
    'prints values as text: markup, tags and markers inside a value are never expanded',
    async () => {
      const out = await lines('<p>[[a]]</p><p>[[.b]]</p>[[#items]]<p>[[x]]</p>[[/items]]', [
        { name: 'a', value_type: 'STRING', value: '<b>bold</b> [[b]] [[.b]]' },
        { name: 'b', value_type: 'STRING', value: '[[#items]]loop[[/items]]' },
        { name: 'items', value_type: 'LIST', value: [{ x: '<i>&amp;</i> [[a]]' }] },
      ]);
      expect(out).toEqual(['<b>bold</b> [[b]] [[.b]]', '[[#items]]loop[[/items]]', '<i>&amp;</i> [[a]]']);
    },
  );

  itWithPoppler("keeps the spec's [[.name]] and a lone TABLE rendering as a table", async () => {
    const out = await lines('<h1>Invoice [[.number]]</h1>[[.lines]]<p>Thanks</p>', [
      { name: 'number', value_type: 'NUMBER', value: 42 },
      LINES,
    ]);
    expect(out).toEqual(['Invoice 42', 'Item Unit price', 'Tea 0.1', 'Cake 0.2', 'Thanks']);
  });

  it('fails naming an unclosed section, a stray close, an unclosed tag and unescaped tags', async () => {
    const people: PdfVariable = { name: 'people', value_type: 'LIST', value: [] };
    const [unclosed] = await issues(renderPdf({ template: '<p>[[#people]]x</p>', variables: [people] }));
    expect(unclosed).toMatchObject({ code: 'unclosed_section', path: 'template' });
    expect(unclosed!.message).toContain('[[#people]]');
    expect(unclosed!.message).toContain('[[/people]]');
    const [unopened] = await issues(renderPdf({ template: '<p>x[[/people]]</p>', variables: [people] }));
    expect(unopened).toMatchObject({ code: 'unopened_section' });
    const [tag] = await issues(renderPdf({ template: '<p>[[name</p>', variables: [] }));
    expect(tag).toMatchObject({ code: 'unclosed_tag', path: 'template' });
    for (const template of ['<p>[[{name}]]</p>', '<p>[[&name]]</p>']) {
      const [raw] = await issues(
        renderPdf({ template, variables: [{ name: 'name', value_type: 'STRING', value: '<b>x</b>' }] }),
      );
      expect(raw).toMatchObject({ code: 'unescaped_value', path: 'template' });
    }
  });

  it('refuses a LIST that is not an array and an OBJECT that is not an object, naming the variable', async () => {
    const found = await issues(
      renderPdf({
        template: '',
        variables: [
          { name: 'l', value_type: 'LIST', value: { a: 1 } },
          { name: 'o', value_type: 'OBJECT', value: [1] },
        ],
      }),
    );
    expect(found.map((issue) => issue.path)).toEqual(['variables[0].value', 'variables[1].value']);
    expect(found[0]!.message).toContain('"l"');
  });

  itWithPoppler('finds nothing on the prototype: [[constructor]] prints nothing', async () => {
    expect(
      await lines('<p>a[[constructor]]b[[o.toString]]c</p>', [
        { name: 'o', value_type: 'OBJECT', value: { x: 1 } },
      ]),
    ).toEqual(['abc']);
  });
});

describe('create_pdf formats and totals', () => {
  itWithPoppler('formats NUMBER and DATE variables with Intl options, dates in UTC', async () => {
    const out = await lines('<p>[[.amount]]|[[.share]]|[[.count]]|[[.day]]|[[.at]]|[[.oslo]]</p>', [
      {
        name: 'amount',
        value_type: 'NUMBER',
        value: '1234.5',
        format: { locale: 'de-DE', style: 'currency', currency: 'EUR' },
      },
      {
        name: 'share',
        value_type: 'NUMBER',
        value: 0.256,
        format: { style: 'percent', maximumFractionDigits: 1 },
      },
      { name: 'count', value_type: 'NUMBER', value: 1234567, format: { locale: 'en-US' } },
      {
        name: 'day',
        value_type: 'DATE',
        value: '2026-01-31',
        format: { locale: 'en-GB', dateStyle: 'long' },
      },
      {
        name: 'at',
        value_type: 'DATE',
        value: '2026-01-31T23:30:00Z',
        format: { locale: 'en-US', dateStyle: 'medium', timeStyle: 'short' },
      },
      {
        name: 'oslo',
        value_type: 'DATE',
        value: '2026-01-31T23:30:00Z',
        format: { locale: 'en-GB', dateStyle: 'short', timeZone: 'Europe/Oslo' },
      },
    ]);
    expect(out).toEqual(['1.234,50 €|25.6%|1,234,567|31 January 2026|Jan 31, 2026, 11:30 PM|01/02/2026']);
  });

  itWithPoppler('formats TABLE columns and adds a totals row summed in decimal', async () => {
    const out = await lines('[[.lines]]<p>Total: [[lines.totals.Amount]]</p>', [
      {
        name: 'lines',
        value_type: 'TABLE',
        value: {
          columns: [
            { name: 'Item' },
            {
              name: 'Amount',
              type: 'number',
              format: { locale: 'en-US', style: 'currency', currency: 'USD' },
            },
            { name: 'Qty', type: 'number' },
          ],
          rows: [
            ['Tea', 0.1, 1],
            ['Cake', 0.2, 2],
            ['Water', null, 3],
          ],
        },
        totals: ['Amount', 'Qty'],
      },
    ]);
    expect(out).toEqual([
      'Item Amount Qty',
      'Tea $0.10 1',
      'Cake $0.20 2',
      'Water 3',
      'Total $0.30 6',
      'Total: $0.30',
    ]);
  });

  itWithPoppler(
    'takes formats by column name from a TABLE variable (for tables that come from a read)',
    async () => {
      const out = await lines('[[.lines]]', [
        {
          name: 'lines',
          value_type: 'TABLE',
          value: { columns: [{ name: 'Item' }, { name: 'Amount' }], rows: [['Desk', 150.5]] },
          format: { Amount: { locale: 'en-GB', style: 'currency', currency: 'GBP' } },
          totals: ['Amount'],
        },
      ]);
      expect(out).toEqual(['Item Amount', 'Desk £150.50', 'Total £150.50']);
      const [bad] = await issues(
        renderPdf({
          template: '',
          variables: [
            {
              name: 't',
              value_type: 'TABLE',
              value: { columns: [{ name: 'A' }], rows: [] },
              format: { B: {} },
            },
          ],
        }),
      );
      expect(bad).toMatchObject({ code: 'unknown_column', path: 'variables[0].format.B' });
    },
  );

  it('sums exactly in decimal', () => {
    expect(decimalSum([0.1, 0.2])).toBe('0.3');
    expect(decimalSum(['150.50', '0.25', 1e-7, '-0.75', 'n/a', null])).toBe('150.0000001');
    expect(decimalSum([1e21, 1])).toBe('1000000000000000000001');
    expect(decimalSum([])).toBe('0');
    expect(decimalSum(['-0.5', '0.2'])).toBe('-0.3');
  });

  it('refuses a bad format or totals naming the variable and the path', async () => {
    const found = await issues(
      renderPdf({
        template: '',
        variables: [
          { name: 'a', value_type: 'NUMBER', value: 1, format: { style: 'currency' } },
          { name: 'd', value_type: 'DATE', value: '2026-01-01', format: { timeZone: 'Mars/Base' } },
          {
            name: 't',
            value_type: 'TABLE',
            value: { columns: [{ name: 'A' }], rows: [] },
            totals: ['B'],
          },
          { name: 's', value_type: 'STRING', value: 'x', totals: ['A'] },
        ],
      }),
    );
    expect(found.map((issue) => issue.path)).toEqual([
      'variables[0].format',
      'variables[1].format',
      'variables[2].totals',
      'variables[3].totals',
    ]);
    expect(found[2]!.message).toContain('"B"');
  });
});
