import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jsQR from 'jsqr';
import { PDFDocument, PDFName, PDFRawStream } from 'pdf-lib';
// @ts-expect-error -- pngjs (a dependency of qrcode) ships no types
import { PNG } from 'pngjs';
import { describe, expect } from 'vitest';
import { loadProject } from '../../src/node/index.js';
import { decodeBase64 } from '../../src/pdf/base64.js';
import { itWithPoppler } from '../pdf/poppler.js';

const dir = mkdtempSync(join(tmpdir(), 'stepwire-invoice-'));

function pdfOf(run: { steps: { name: string; output: unknown }[] }): Uint8Array {
  return decodeBase64(
    (run.steps.find((step) => step.name === 'pdf')!.output as { pdf_data: string }).pdf_data,
  );
}

function pageText(file: string, page: number): string[] {
  return execFileSync('pdftotext', ['-layout', '-f', String(page), '-l', String(page), file, '-'], {
    encoding: 'utf8',
  })
    .split('\n')
    .map((line) => line.trim().replace(/\s+/g, ' '))
    .filter((line) => line !== '');
}

describe('examples/invoices: the invoice a business would send', () => {
  itWithPoppler(
    'shows a logo, the date, the number, money, a total, a payment QR code and page X of Y',
    async () => {
      const { engine } = await loadProject('examples/invoices');
      const run = await engine.run('invoice', { customer_id: 1 });
      expect(run.status).toBe('succeeded');
      const bytes = pdfOf(run);
      const file = join(dir, 'invoice-1.pdf');
      writeFileSync(file, bytes);
      const lines = pageText(file, 1);
      expect(lines).toEqual([
        'Stepwire Supplies Ltd · 12 Analytical Row, London EC1 · VAT GB 123 4567 89',
        'Invoice INV-2026-1',
        'Date: 15 January 2026',
        'Bill to: Ada Lovelace, customer number 1',
        '3 orders',
        'Order Item Amount',
        '10 Brass lamp £25.00',
        '11 Desk, oak £150.50',
        '12 Notebook "Analytical" £4.25',
        'Total £179.75',
        'Amount due: £179.75, payable within 30 days to Stepwire Supplies Ltd, sort code 12-34-56,',
        'account 12345678, reference INV-2026-1.',
        'Scan to pay with reference INV-2026-1. Thank you for your business.',
        'Invoice INV-2026-1 · Ada Lovelace · Page 1 of 1',
      ]);
      // The logo: one image (its alpha channel a soft mask of it), embedded once.
      const doc = await PDFDocument.load(bytes);
      const images = [...doc.context.enumerateIndirectObjects()].filter(
        ([, object]) =>
          object instanceof PDFRawStream && object.dict.get(PDFName.of('Subtype')) === PDFName.of('Image'),
      );
      const masks = new Set(
        images.map(([, object]) => String((object as PDFRawStream).dict.get(PDFName.of('SMask')))),
      );
      expect(images.filter(([ref]) => !masks.has(String(ref)))).toHaveLength(1);
      expect(doc.getTitle()).toBe('Invoice INV-2026-1');
      // The QR code reads back as the payment reference and amount.
      execFileSync('pdftoppm', ['-r', '150', '-f', '1', '-l', '1', '-png', '-singlefile', file, file]);
      const bitmap = (
        PNG as { sync: { read(data: Buffer): { width: number; height: number; data: Buffer } } }
      ).sync.read(readFileSync(`${file}.png`));
      expect(jsQR(new Uint8ClampedArray(bitmap.data), bitmap.width, bitmap.height)?.data).toBe(
        'PAY INV-2026-1 £179.75',
      );
      // A date given with the input is printed instead of the default.
      const dated = await engine.run('invoice', { customer_id: 3, invoice_date: '2026-03-01' });
      const datedFile = join(dir, 'invoice-3.pdf');
      writeFileSync(datedFile, pdfOf(dated));
      expect(pageText(datedFile, 1)).toContain('Date: 1 March 2026');
    },
  );

  itWithPoppler(
    'a long invoice: header row and furniture on every page, Page X of Y, the total exact',
    async () => {
      const { engine } = await loadProject('examples/invoices');
      const orders = Array.from({ length: 90 }, (_, i) => ({
        order_id: 100 + i,
        customer_id: 2,
        item: `Part ${i + 1}`,
        amount: 0.1,
        status: 'open',
      }));
      await engine.catalog.append('orders', orders);
      const run = await engine.run('invoice', { customer_id: 2 });
      expect(run.status).toBe('succeeded');
      const file = join(dir, 'invoice-2.pdf');
      writeFileSync(file, pdfOf(run));
      const pages = Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [file], { encoding: 'utf8' }))![1]);
      expect(pages).toBeGreaterThanOrEqual(2);
      const all: string[] = [];
      for (let page = 1; page <= pages; page++) {
        const lines = pageText(file, page);
        expect(lines[0]).toBe('Stepwire Supplies Ltd · 12 Analytical Row, London EC1 · VAT GB 123 4567 89');
        if (lines.some((line) => / Part \d+ /.test(line))) expect(lines).toContain('Order Item Amount');
        expect(lines.at(-1)).toBe(`Invoice INV-2026-2 · Grace Hopper · Page ${page} of ${pages}`);
        all.push(...lines);
      }
      // 80 (the chair) + 90 x 0.10, in decimal.
      expect(all).toContain('Total £89.00');
      expect(all.filter((line) => /^\d+ Part \d+ £0\.10$/.test(line))).toHaveLength(90);
    },
  );
});
