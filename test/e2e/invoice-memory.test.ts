import { describe, expect, it } from 'vitest';
import { MemoryFileStore } from '../../src/index.js';
import { shopEngine } from '../engine/helpers.js';
import { invoiceWorkflow } from '../invoice-workflow.js';
import { HAS_POPPLER, pdfText, textLines } from '../pdf/poppler.js';

describe('the invoice workflow on the in-memory adapters', () => {
  it('reads orders, renders a PDF with a TABLE, uploads it, posts to chat and outputs file_url', async () => {
    const files = new MemoryFileStore();
    const { engine, chat } = await shopEngine({ files: { memory: files } });
    await engine.workflows.create(invoiceWorkflow('memory'));
    const run = await engine.run('invoice', { customer_id: 1 });
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    const url = (run.output as { file_url: string }).file_url;
    expect(url).toBe('memory://files/invoices/invoice-1.pdf');
    expect(chat.messages).toEqual([{ channel: 'general', message: `Invoice for customer 1: ${url}` }]);
    const pdf = files.read(url)!;
    expect(new TextDecoder().decode(pdf.slice(0, 5))).toBe('%PDF-');
    if (!HAS_POPPLER) return;
    const lines = textLines(pdfText(pdf));
    expect(lines[0]).toBe('Invoice for Ada');
    expect(lines).toContain('Orders: 2');
    const header = lines.findIndex((line) => /Order\s+Item\s+Amount/.test(line));
    expect(header).toBeGreaterThan(0);
    expect(lines[header + 1]).toMatch(/^10\s+Lamp\s+25$/);
    expect(lines[header + 2]).toMatch(/^11\s+Desk\s+150\.5$/);
  });
});
