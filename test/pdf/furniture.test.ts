import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deflateSync } from 'node:zlib';
import jsQR from 'jsqr';
import { PDFDocument, PDFName, PDFRawStream } from 'pdf-lib';
// @ts-expect-error -- pngjs (a dependency of qrcode) ships no types
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { Engine, MemoryFileStore } from '../../src/index.js';
import { ValidationError } from '../../src/errors/index.js';
import { renderPdf, type PdfVariable } from '../../src/pdf/index.js';
import { decodeBase64 } from '../../src/pdf/base64.js';
import { itWithPoppler, pdfInfo, pdfText, textLines, writePdf } from './poppler.js';

/** A PNG of `width` x `height` pixels, left half red, right half blue. */
export function testPng(width: number, height: number): Uint8Array {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes: Buffer): number => {
    let c = 0xffffffff;
    for (const byte of bytes) c = crcTable[(c ^ byte) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer): Buffer => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(typed));
    return Buffer.concat([length, typed, sum]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8;
  header[9] = 2;
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const at = y * (width * 3 + 1) + 1 + x * 3;
      raw[at] = x < width / 2 ? 220 : 20;
      raw[at + 1] = 30;
      raw[at + 2] = x < width / 2 ? 30 : 220;
    }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const PNG_URL = `data:image/png;base64,${Buffer.from(testPng(40, 20)).toString('base64')}`;

async function issue(promise: Promise<unknown>): Promise<ValidationError['issues'][number]> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  return (error as ValidationError).issues[0]!;
}

function rows(count: number): PdfVariable {
  return {
    name: 'lines',
    value_type: 'TABLE',
    value: {
      columns: [{ name: 'Item' }, { name: 'Amount', type: 'number' }],
      rows: Array.from({ length: count }, (_, i) => [`Item ${i + 1}`, i + 1]),
    },
  };
}

/** Image XObjects in a PDF. */
async function imageCount(bytes: Uint8Array): Promise<number> {
  const doc = await PDFDocument.load(bytes);
  let count = 0;
  for (const [, object] of doc.context.enumerateIndirectObjects())
    if (object instanceof PDFRawStream && object.dict.get(PDFName.of('Subtype')) === PDFName.of('Image'))
      count++;
  return count;
}

/** Page `page` as an RGBA bitmap (pdftoppm at `dpi`). */
function pageBitmap(
  bytes: Uint8Array,
  page: number,
  dpi = 150,
): { width: number; height: number; data: Buffer } {
  const file = writePdf(bytes);
  execFileSync('pdftoppm', [
    '-r',
    String(dpi),
    '-f',
    String(page),
    '-l',
    String(page),
    '-png',
    '-singlefile',
    file,
    file,
  ]);
  return (PNG as { sync: { read(data: Buffer): { width: number; height: number; data: Buffer } } }).sync.read(
    readFileSync(`${file}.png`),
  );
}

/** An invoice of 150 lines with a header and a `Page X of Y` footer: three pages or more. */
function furnishedInvoice(): Promise<Uint8Array> {
  return renderPdf({
    template:
      '<header><p>ACME Ltd</p></header><footer><p>Page [[page]] of [[pages]]</p></footer><h1>Invoice</h1>[[.lines]]',
    variables: [rows(150)],
  });
}

describe('create_pdf page furniture', () => {
  itWithPoppler(
    'repeats <header> and <footer> on every page with page X of Y, and the table header row',
    async () => {
      const bytes = await furnishedInvoice();
      const pages = Number(pdfInfo(bytes)['Pages']);
      expect(pages).toBeGreaterThanOrEqual(3);
      for (let page = 1; page <= pages; page++) {
        const lines = textLines(pdfText(bytes, { first: page, last: page }));
        expect(lines[0]).toBe('ACME Ltd');
        expect(lines.at(-1)).toBe(`Page ${page} of ${pages}`);
        expect(lines).toContain('Item Amount');
      }
      // Every row once, whole, in order.
      const all = textLines(pdfText(bytes)).filter((line) => /^Item \d+/.test(line));
      expect(all).toEqual(Array.from({ length: 150 }, (_, i) => `Item ${i + 1} ${i + 1}`));
    },
  );

  it("stores a page's short header and footer stream as it is, and deflates the body", async () => {
    const doc = await PDFDocument.load(await furnishedInvoice());
    const streams = doc.getPages().map((page) => {
      const contents = page.node.Contents()!;
      const refs = 'asArray' in contents ? contents.asArray() : [contents];
      return refs.map((ref) => doc.context.lookup(ref) as PDFRawStream);
    });
    expect(streams.length).toBeGreaterThanOrEqual(3);
    // A full page's body is deflated; a stream left as it is (every page's furniture, and the last
    // page's body when it is short) is under 1 KiB. The test above reads both back with poppler.
    expect(streams[0]![0]!.dict.get(PDFName.of('Filter'))).toBe(PDFName.of('FlateDecode'));
    for (const [, furniture] of streams) expect(furniture!.dict.get(PDFName.of('Filter'))).toBeUndefined();
    for (const stream of streams.flat())
      if (stream.dict.get(PDFName.of('Filter')) === undefined)
        expect(stream.getContentsSize()).toBeLessThan(1024);
  });

  itWithPoppler('takes the page size and margins from @page, and breaks pages where asked', async () => {
    const letter = await renderPdf({
      template:
        '<style>@page { size: Letter landscape; margin: 1in 20mm }</style><p>One</p><p style="page-break-after: always">Two</p><p>Three</p><div style="break-before: page">Four</div>',
    });
    expect(pdfInfo(letter)['Page size']).toBe('792 x 612 pts (letter)');
    expect(pdfInfo(letter)['Pages']).toBe('3');
    expect(textLines(pdfText(letter, { first: 2, last: 2 }))).toEqual(['Three']);
    const a4 = await renderPdf({ template: '<style>@page { size: A4 }</style><p>x</p>' });
    expect(pdfInfo(a4)['Page size']).toBe('595.28 x 841.89 pts (A4)');
    const bad = await issue(renderPdf({ template: '<style>@page { size: huge }</style>' }));
    expect(bad).toMatchObject({ code: 'invalid_page_style', path: 'template' });
    expect(bad.message).toContain('size');
  });

  itWithPoppler('draws a data: PNG once per document however many pages show it', async () => {
    const bytes = await renderPdf({
      template: `<header><img src="${PNG_URL}" width="80"></header><img src="${PNG_URL}" width="40" align="right">[[.lines]]`,
      variables: [rows(120)],
    });
    expect(Number(pdfInfo(bytes)['Pages'])).toBeGreaterThan(1);
    expect(await imageCount(bytes)).toBe(1);
    // The header logo: red on its left half, blue on its right, at the top-left of page 2.
    const bitmap = pageBitmap(bytes, 2, 72);
    const pixel = (x: number, y: number): number[] => {
      const at = (y * bitmap.width + x) * 4;
      return [bitmap.data[at]!, bitmap.data[at + 1]!, bitmap.data[at + 2]!];
    };
    expect(pixel(48 + 15, 48 + 10)).toEqual([220, 30, 30]);
    expect(pixel(48 + 45, 48 + 10)).toEqual([20, 30, 220]);
  });

  itWithPoppler(
    'draws a JPEG and an image of the step file store (file_url), through the engine',
    async () => {
      // A real JPEG: a small page rendered by pdftoppm.
      const small = writePdf(await renderPdf({ template: '<h1>J</h1>' }));
      execFileSync('pdftoppm', ['-r', '10', '-jpeg', '-singlefile', small, small]);
      const jpeg = readFileSync(`${small}.jpg`);
      const files = new MemoryFileStore();
      const stored = await files.put({
        data: new Uint8Array(jpeg),
        name: 'logo.jpg',
        contentType: 'image/jpeg',
      });
      const engine = new Engine({ files: { drive: files } });
      await engine.workflows.create({
        name: 'doc',
        steps: [
          {
            name: 'pdf',
            type: 'l2' as const,
            l2_data: {
              provider: 'platform',
              module: 'converters',
              action: 'create_pdf',
              input_data: {
                template: `<img src="${stored.url}" width="50"><img src="data:image/jpeg;base64,${Buffer.from(jpeg).toString('base64')}">`,
                template_type: 'html' as const,
              },
              metadata: {},
            },
          },
        ],
        wires: [],
      });
      const run = await engine.run('doc', {});
      expect(run.status).toBe('succeeded');
      const pdf = decodeBase64(
        (run.steps.find((step) => step.name === 'pdf')!.output as { pdf_data: string }).pdf_data,
      );
      expect(await imageCount(pdf)).toBe(2);
    },
  );

  it('refuses a remote image without fetching it, and fails naming an unreadable image or bad markup', async () => {
    let hits = 0;
    const server = createServer((_, res) => {
      hits++;
      res.end('x');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const remote = await issue(renderPdf({ template: `<img src="http://127.0.0.1:${port}/logo.png">` }));
      expect(remote).toMatchObject({ code: 'invalid_markup', path: 'template' });
      expect(remote.message).toContain('remote images are not fetched');
      expect(hits).toBe(0);
    } finally {
      server.close();
    }
    const broken = await issue(
      renderPdf({ template: '<p>x</p><img src="data:image/png;base64,iVBORw0KGgoAAAA">' }),
    );
    expect(broken.message).toContain('<img src="data:image/png;base64,iVBORw0KGgoAAAA">');
    const gif = await issue(
      renderPdf({ template: '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">' }),
    );
    expect(gif.message).toContain('not a PNG or JPEG');
    expect((await issue(renderPdf({ template: '<img>' }))).message).toContain('no src');
    expect((await issue(renderPdf({ template: '<img src="x.png" width="wide">' }))).message).toContain(
      '<img> width',
    );
    expect((await issue(renderPdf({ template: '<barcode type="pdf417" value="1">' }))).message).toContain(
      'code128 or ean13',
    );
    expect(
      (await issue(renderPdf({ template: '<barcode type="ean13" value="5901234123458">' }))).message,
    ).toContain('check digit');
    expect((await issue(renderPdf({ template: '<qrcode size="80">' }))).message).toContain('no value');
  });

  itWithPoppler('draws a <qrcode> as vectors that reads back as its value', async () => {
    const bytes = await renderPdf({
      template: '<p>Pay with reference</p><qrcode value="[[.ref]]" size="150">',
      variables: [{ name: 'ref', value_type: 'STRING', value: 'RF18 5390 0754 7034 & <x>' }],
    });
    expect(await imageCount(bytes)).toBe(0);
    const bitmap = pageBitmap(bytes, 1);
    const code = jsQR(new Uint8ClampedArray(bitmap.data), bitmap.width, bitmap.height);
    expect(code?.data).toBe('RF18 5390 0754 7034 & <x>');
  });

  itWithPoppler('draws code128 and EAN-13 bar codes as vectors with their text under them', async () => {
    const bytes = await renderPdf({
      template:
        '<barcode type="ean13" value="5901234123457" height="50"><barcode type="code128" value="INV-2026-0042">',
    });
    expect(await imageCount(bytes)).toBe(0);
    expect(textLines(pdfText(bytes))).toEqual(['5901234123457', 'INV-2026-0042']);
    // Bars across the EAN-13's middle row: guards of 2 bars at both ends and in the middle, 2 per digit.
    const bitmap = pageBitmap(bytes, 1, 144);
    const y = Math.round((48 + 20) * 2);
    let changes = 0;
    let dark = false;
    for (let x = 0; x < bitmap.width; x++) {
      const isDark = bitmap.data[(y * bitmap.width + x) * 4]! < 128;
      if (isDark !== dark) changes++;
      dark = isDark;
    }
    expect(changes / 2).toBe(2 + 6 * 2 + 2 + 6 * 2 + 2);
  });
});
