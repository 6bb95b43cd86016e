import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { renderPdf } from '../../src/pdf/index.js';
import { itWithPoppler, writePdf } from './poppler.js';

const INVOICE = `<html><head><title>Invoice 2024-017</title></head><body>
<h1>Invoice 2024-017</h1>
<p><b>Billed to:</b> [[.customer]]<br>Date: [[.date]]</p>
<h3>Items</h3>
[[.items]]
<p>Total due: <b>[[.total]] EUR</b> — payable within <i>30 days</i>.</p>
<hr>
<ul><li>Bank transfer to the account on file</li><li>Questions: Ελληνικά / Кириллица support</li></ul>
</body></html>`;

describe('renderPdf: page image', () => {
  itWithPoppler('renders page 1 to a non-trivial PNG (saved under test-artifacts/pdf/)', async () => {
    const bytes = await renderPdf({
      template: INVOICE,
      variables: [
        { name: 'customer', value_type: 'STRING', value: 'Crème brûlée Ltd\n12 Rue de la Paix, Paris' },
        { name: 'date', value_type: 'DATE', value: '2024-03-15' },
        { name: 'total', value_type: 'NUMBER', value: '1363.40' },
        {
          name: 'items',
          value_type: 'TABLE',
          value: {
            columns: [
              { name: 'Description' },
              { name: 'Qty', type: 'number' },
              { name: 'Unit price', number: { latin_numbering: true, step: 0.01 } },
              { name: 'Amount', number: { latin_numbering: true, step: 0.01 } },
            ],
            rows: [
              ['Consulting, March (on-site workshop with the data team, two days)', 16, 75, 1200],
              ['Travel — train Paris ↔ Lyon', 2, 61.7, 123.4],
              ['Printed handbooks', 4, 10, 40],
            ],
          },
        },
      ],
    });
    const dir = join(process.cwd(), 'test-artifacts', 'pdf');
    mkdirSync(dir, { recursive: true });
    const prefix = join(dir, 'invoice-page1');
    execFileSync(
      'pdftoppm',
      ['-png', '-r', '60', '-f', '1', '-l', '1', '-singlefile', writePdf(bytes), prefix],
      {
        timeout: 20_000,
      },
    );
    expect(statSync(`${prefix}.png`).size).toBeGreaterThan(5_000);
  });
});
