import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFName } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { renderPdf } from '../../src/pdf/index.js';
import type { DataTable } from '../../src/schema/data-table.js';
import { pdfInfo, pdfText, textLines, itWithPoppler } from './poppler.js';

function tableInput(table: DataTable, template = '<h1>Report</h1>[[.t]]') {
  return { template, variables: [{ name: 't', value_type: 'TABLE' as const, value: table }] };
}

describe('renderPdf: HTML tables', () => {
  itWithPoppler('renders header and cells in row order, spanning cells included', async () => {
    const out = pdfText(
      await renderPdf({
        template:
          '<table><thead><tr><th>Item</th><th>Qty</th><th>Price</th></tr></thead><tbody>' +
          '<tr><td>Tea</td><td>2</td><td>3.50</td></tr><tr><td>Coffee <i>beans</i></td><td>10</td><td>12.00</td></tr>' +
          '<tr><td colspan="2"><b>Total</b></td><td>15.50</td></tr></tbody></table>',
      }),
    );
    expect(textLines(out)).toEqual(['Item Qty Price', 'Tea 2 3.50', 'Coffee beans 10 12.00', 'Total 15.50']);
  });

  itWithPoppler('wraps long text inside its cell and keeps numbers whole and right-aligned', async () => {
    const long = 'a very long description that cannot fit on one line of the cell at all '.repeat(3);
    const out = pdfText(
      await renderPdf({
        template: `<table><tr><th>Text</th><th>Amount</th></tr><tr><td>${long}</td><td>1,234.50</td></tr><tr><td>x</td><td>7.00</td></tr></table>`,
      }),
    );
    const lines = out.split('\n').filter((line) => line.trim() !== '');
    expect(lines.length).toBeGreaterThan(3);
    const amount = lines.find((line) => line.includes('1,234.50'))!;
    const seven = lines.find((line) => line.includes('7.00'))!;
    expect(amount.indexOf('1,234.50') + '1,234.50'.length).toBe(seven.indexOf('7.00') + '7.00'.length);
    expect(textLines(out).join(' ')).toContain(long.trim().split(' ').slice(0, 6).join(' '));
  });

  itWithPoppler('treats rows of th cells as the header, unknown tags in cells as text', async () => {
    const out = pdfText(
      await renderPdf({
        template:
          '<table><tr><th>A</th><th>B</th></tr><tr><td><marquee>m</marquee></td><td>n</td></tr></table>',
      }),
    );
    expect(textLines(out)).toEqual(['A B', 'm n']);
  });
});

describe('renderPdf: TABLE variables', () => {
  const columns: DataTable['columns'] = [
    { name: 'Name' },
    { name: 'Price', number: { latin_numbering: true, step: 0.01, min: 0, max: 10 } },
    { name: 'Count', type: 'number', number: { latin_numbering: true, step: 1 } },
    { name: 'Site', string: { is_json: false, is_url: true } },
    { name: 'Day', date: {} },
  ];

  itWithPoppler('renders a table where the marker stands, formatted by column config', async () => {
    const out = pdfText(
      await renderPdf(
        tableInput(
          {
            columns,
            rows: [
              ['Crème brûlée', 4.5, '١٢', 'https://example.com/a', '2024-01-02T00:00:00Z'],
              ['Кириллица', 20, 3.7, null, '2024-02-03'],
              ['short row'],
            ],
          },
          '<p>Before</p>[[.t]]<p>After</p>',
        ),
      ),
    );
    expect(textLines(out)).toEqual([
      'Before',
      'Name Price Count Site Day',
      'Crème brûlée 4.50 12 https://example.com/a 2024-01-02',
      'Кириллица 20.00 4 2024-02-03',
      'short row',
      'After',
    ]);
  });

  itWithPoppler('splits a paragraph around a TABLE marker', async () => {
    const out = pdfText(
      await renderPdf(tableInput({ columns: [{ name: 'c' }], rows: [['v']] }, '<p>Start [[.t]] end</p>')),
    );
    expect(textLines(out)).toEqual(['Start', 'c', 'v', 'end']);
  });

  itWithPoppler(
    'prints a TABLE value inside a table cell as lines, its newlines and tabs as line breaks and spaces',
    async () => {
      const value = {
        columns: [{ name: 'a' }, { name: 'b' }],
        rows: [
          ['L1\nL2', 'z'],
          ['tab\there', 'cr\rx'],
        ],
      };
      const out = pdfText(await renderPdf(tableInput(value, '<table><tr><td>[[.t]]</td></tr></table>')));
      expect(out).not.toContain('?');
      // pdftotext reads the bold header line without its spaces.
      expect(textLines(out)).toEqual(['a|b', 'L1', 'L2 | z', 'tab here | cr', 'x']);
    },
  );

  it('makes is_url cells link annotations', async () => {
    const bytes = await renderPdf(
      tableInput({ columns, rows: [['a', 1, 1, 'https://example.com/path?q=1', null]] }),
    );
    const doc = await PDFDocument.load(bytes);
    const annots = doc.getPage(0).node.lookup(PDFName.of('Annots'), PDFArray);
    const link = annots.lookup(0, PDFDict);
    const action = link.lookup(PDFName.of('A'), PDFDict);
    expect(action.lookup(PDFName.of('URI'), PDFHexString).decodeText()).toBe('https://example.com/path?q=1');
  });

  itWithPoppler('does not link URLs with other schemes', async () => {
    const bytes = await renderPdf(tableInput({ columns, rows: [['a', 1, 1, 'javascript:alert(1)', null]] }));
    const doc = await PDFDocument.load(bytes);
    expect(doc.getPage(0).node.get(PDFName.of('Annots'))).toBeUndefined();
    expect(pdfText(bytes)).toContain('javascript:alert(1)');
  });

  itWithPoppler('repeats the header row on every page of a long table', async () => {
    const rows = Array.from({ length: 150 }, (_, i) => [`item ${i}`, i * 1.25, i, null, null]);
    const bytes = await renderPdf(tableInput({ columns, rows }));
    expect(Number(pdfInfo(bytes)['Pages'])).toBeGreaterThanOrEqual(3);
    const page2 = textLines(pdfText(bytes, { first: 2, last: 2 }));
    expect(page2[0]).toBe('Name Price Count Site Day');
    expect(page2[1]).toMatch(/^item \d+ /);
    const page3 = textLines(pdfText(bytes, { first: 3, last: 3 }));
    expect(page3[0]).toBe('Name Price Count Site Day');
    const all = textLines(pdfText(bytes)).filter((line) => line.startsWith('item '));
    expect(all.map((line) => line.split(' ')[1])).toEqual(rows.map((_, i) => String(i)));
  });

  itWithPoppler(
    'renders a table without columns as rows only, and an empty table as "(no data)"',
    async () => {
      expect(
        textLines(pdfText(await renderPdf(tableInput({ columns: null, rows: [['a', 'b']] }, '[[.t]]')))),
      ).toEqual(['a b']);
      expect(
        textLines(pdfText(await renderPdf(tableInput({ columns: null, rows: null }, '[[.t]]')))),
      ).toEqual(['(no data)']);
    },
  );
});
