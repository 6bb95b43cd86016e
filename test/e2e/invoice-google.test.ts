import { OAuth2Client } from 'google-auth-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GoogleDrive, GoogleSheets } from '../../src/adapters/google/index.js';
import { Engine, SlackChat } from '../../src/index.js';
import { customersEntity, ordersCustomerFk, ordersEntity, shopSheets } from '../fixtures.js';
import { startFakeDrive, type FakeDrive } from '../fakes/google-drive.js';
import { startFakeSheets, type FakeSheets } from '../fakes/google-sheets.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack.js';
import { invoiceWorkflow } from '../invoice-workflow.js';
import { HAS_POPPLER, pdfText, textLines } from '../pdf/poppler.js';

let sheets: FakeSheets;
let drive: FakeDrive;
let slack: FakeSlack;

beforeAll(async () => {
  [sheets, drive, slack] = await Promise.all([startFakeSheets(), startFakeDrive(), startFakeSlack()]);
});
afterAll(async () => {
  await Promise.all([sheets.close(), drive.close(), slack.close()]);
});

function engineOnFakes() {
  sheets.reset();
  drive.reset();
  slack.reset();
  sheets.addSpreadsheet('shop', shopSheets()['shop']!);
  drive.addFolder('invoices');
  const sheetsAuth = new OAuth2Client();
  sheetsAuth.setCredentials({ access_token: sheets.token });
  const driveAuth = new OAuth2Client();
  driveAuth.setCredentials({ access_token: drive.token });
  const fast = { attempts: 4, baseMs: 1, capMs: 20 };
  return new Engine({
    spreadsheets: new GoogleSheets({ auth: sheetsAuth, rootUrl: sheets.url, retry: fast }),
    files: { drive: new GoogleDrive({ auth: driveAuth, rootUrl: drive.url, retry: fast }) },
    chat: new SlackChat({ token: slack.token, baseUrl: slack.apiUrl, retry: fast }),
  });
}

describe('the invoice workflow on Google Sheets, Drive and Slack (local fakes)', () => {
  it('runs end to end, through injected 429s and 500s', async () => {
    const engine = engineOnFakes();
    await engine.catalog.registerEntity(customersEntity);
    await engine.catalog.registerEntity(ordersEntity);
    await engine.catalog.createRelationship(ordersCustomerFk);
    await engine.workflows.create(invoiceWorkflow('drive', 'general', 'invoices'));
    sheets.faults.push(
      { status: 429, reason: 'RESOURCE_EXHAUSTED', retryAfter: '0' },
      { status: 500, reason: 'INTERNAL' },
    );
    drive.faults.push({ status: 503, reason: 'UNAVAILABLE' });
    slack.fail({ status: 429, retryAfter: '0', body: '{"ok":false,"error":"ratelimited"}' });

    const run = await engine.run('invoice', { customer_id: 2 });
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    const url = (run.output as { file_url: string }).file_url;
    expect(url).toMatch(/^https:\/\/drive\.google\.com\/file\/d\/.+\/view/);

    const [file] = [...drive.files.values()];
    expect(file).toMatchObject({ name: 'invoice-2.pdf', mimeType: 'application/pdf', parents: ['invoices'] });
    if (HAS_POPPLER) {
      const lines = textLines(pdfText(new Uint8Array(file!.data)));
      expect(lines[0]).toBe('Invoice for Grace');
      expect(lines.some((line) => /^12\s+Chair\s+80$/.test(line))).toBe(true);
    }
    expect(slack.posted).toEqual([{ channel: 'general', text: `Invoice for customer 2: ${url}` }]);
    // Reads asked only for ranges from the origin, unformatted.
    const reads = sheets.requests.filter((r) => r.method === 'GET' && r.path.includes('/values'));
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.every((r) => r.query['valueRenderOption']?.[0] === 'UNFORMATTED_VALUE')).toBe(true);
  });

  it('appends through the engine with its all-or-nothing rules on the Sheets fake', async () => {
    const engine = engineOnFakes();
    await engine.catalog.registerEntity(customersEntity);
    await engine.catalog.registerEntity(ordersEntity);
    await engine.catalog.createRelationship(ordersCustomerFk);
    await expect(
      engine.catalog.append('orders', [{ order_id: 20, customer_id: 9, item: 'x', amount: 1 }]),
    ).rejects.toThrow(/customer_id=9/);
    await engine.catalog.append('orders', [{ order_id: 20, customer_id: 3, item: 'Ink', amount: 4 }]);
    const sheet = sheets.sheet('shop', 'orders')!;
    const values = sheet.cells.map((row) =>
      row.map((cell) => (cell === null || cell === undefined ? null : cell)),
    );
    expect(values.at(-1)?.slice(1, 5)).toEqual([20, 3, 'Ink', 4]);
  });
});
