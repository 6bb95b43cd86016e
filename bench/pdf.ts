/**
 * Benchmark of the PDF renderer: a heading and a 1,000-row x 5-column table rendered by renderPdf,
 * by a hand-laid pdf-lib loop (one drawText per cell, same font, own pagination) and by pdfmake,
 * and by a `create_pdf` step in a workflow run (against renderPdf alone); then 10,000 rows to show
 * time and memory grow linearly. Run: `npx tsx bench/pdf.ts`.
 */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pathToFileURL } from 'node:url';
import fontkit from '@pdf-lib/fontkit';
import { PDFDocument } from 'pdf-lib';
import { decodeBase64 } from '../src/pdf/base64.js';
import { DEJAVU_SANS_BOLD, DEJAVU_SANS_REGULAR } from '../src/pdf/fonts/dejavu-sans.js';
import { Engine } from '../src/index.js';
import { renderPdf } from '../src/pdf/index.js';
import type { DataTable } from '../src/schema/data-table.js';
import { SMOKE, check, checkEqual, sized } from './util.js';

/** Rows of the timed report, and the sizes the scaling is shown at. */
const ROWS = sized(1000, 40);
const SCALE = SMOKE ? [ROWS, 2 * ROWS] : [1000, 5000, 10_000];
const ROUNDS = sized(9, 1);

const COLUMNS = ['#', 'Product', 'Quantity', 'Price', 'Date'];

function makeRows(count: number): unknown[][] {
  const rows: unknown[][] = [];
  for (let i = 0; i < count; i++) {
    rows.push([
      i + 1,
      `Product ${i % 97} – Crème ${i % 13}`,
      (i * 7) % 50,
      ((i * 37) % 10000) / 100,
      `2024-0${(i % 9) + 1}-1${i % 10}`,
    ]);
  }
  return rows;
}

function cellText(rows: unknown[][]): string[][] {
  return rows.map((row) => [
    String(row[0]),
    String(row[1]),
    String(row[2]),
    (row[3] as number).toFixed(2),
    String(row[4]),
  ]);
}

function table(rows: unknown[][]): DataTable {
  return {
    columns: [
      { name: '#', type: 'number' },
      { name: 'Product' },
      { name: 'Quantity', type: 'number' },
      { name: 'Price', number: { latin_numbering: true, step: 0.01 } },
      { name: 'Date', date: {} },
    ],
    rows,
  };
}

async function stepwire(rows: unknown[][]): Promise<Uint8Array> {
  return renderPdf({
    template: '<h1>Sales report</h1>[[.sales]]',
    variables: [{ name: 'sales', value_type: 'TABLE', value: table(rows) }],
  });
}

/** A 48 x 16 PNG logo (two-colour bands), made once. */
const LOGO = (() => {
  const { deflateSync } = createRequire(import.meta.url)('node:zlib') as typeof import('node:zlib');
  const table = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes: Buffer): number => {
    let c = 0xffffffff;
    for (const byte of bytes) c = table[(c ^ byte) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer): Buffer => {
    const head = Buffer.alloc(4);
    head.writeUInt32BE(data.length);
    const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(typed));
    return Buffer.concat([head, typed, sum]);
  };
  const [w, h] = [48, 16];
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  const raw = Buffer.alloc((w * 3 + 1) * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) raw.set(y < 8 ? [24, 48, 96] : [240, 160, 32], y * (w * 3 + 1) + 1 + x * 3);
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
  return `data:image/png;base64,${png.toString('base64')}`;
})();

/** The same report dressed: a header with a logo and a line, a footer with page X of Y. */
async function dressed(rows: unknown[][]): Promise<Uint8Array> {
  return renderPdf({
    template:
      `<header><img src="${LOGO}" width="64"><p>Stepwire Supplies Ltd</p></header>` +
      '<footer><p>Sales report · Page [[page]] of [[pages]]</p></footer><h1>Sales report</h1>[[.sales]]',
    variables: [{ name: 'sales', value_type: 'TABLE', value: table(rows) }],
  });
}

/** An engine with workflow `report`: one `create_pdf` step rendering the same report from its input. */
async function reportEngine(): Promise<Engine> {
  const engine = new Engine();
  await engine.workflows.create({
    name: 'report',
    steps: [
      {
        name: 'pdf',
        type: 'l2',
        l2_data: {
          provider: 'platform',
          module: 'converters',
          action: 'create_pdf',
          input_data: {
            template: '<h1>Sales report</h1>[[.sales]]',
            variables: [{ name: 'sales', value_type: 'TABLE', value: '{{input.sales}}' }],
          },
        },
      },
    ],
    wires: [],
    workflow_input: { name: 'input', input_schema: { type: 'object' } },
  });
  return engine;
}

/** The report through `engine.run`: the step's input resolved and checked, the PDF as base64, the run record. */
async function inWorkflow(engine: Engine, rows: unknown[][]): Promise<Uint8Array> {
  const record = await engine.run('report', { sales: table(rows) });
  if (record.status !== 'succeeded') throw new Error(`create_pdf failed: ${JSON.stringify(record.error)}`);
  return decodeBase64((record.output as { pdf: { pdf_data: string } }).pdf.pdf_data);
}

/** The baseline: pdf-lib drawText per cell, fixed columns, new page when the row does not fit. */
async function drawTextLoop(cells: string[][]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.registerFontkit(fontkit);
  const regular = await doc.embedFont(decodeBase64(DEJAVU_SANS_REGULAR), { subset: true });
  const bold = await doc.embedFont(decodeBase64(DEJAVU_SANS_BOLD), { subset: true });
  const x = [48, 90, 330, 400, 470];
  const size = 9;
  const rowHeight = 18.7;
  let page = doc.addPage([595.28, 841.89]);
  page.drawText('Sales report', { x: 48, y: 780, size: 20, font: bold });
  let y = 750;
  const header = (): void => {
    COLUMNS.forEach((name, c) => page.drawText(name, { x: x[c]!, y, size, font: bold }));
    y -= rowHeight;
  };
  header();
  for (const row of cells) {
    if (y < 48) {
      page = doc.addPage([595.28, 841.89]);
      // The renderer repeats the header row inside the 48 pt top margin, its text a little below
      // the row's top: the loop starts its pages as low, so both make as many pages.
      y = 772;
      header();
    }
    for (let c = 0; c < row.length; c++) page.drawText(row[c]!, { x: x[c]!, y, size, font: regular });
    y -= rowHeight;
  }
  return doc.save();
}

async function pdfmake(cells: string[][]): Promise<Uint8Array> {
  const require = createRequire(import.meta.url);
  const PdfPrinter = require('pdfmake') as new (fonts: object) => {
    createPdfKitDocument(definition: object): NodeJS.ReadableStream & { end(): void };
  };
  const toBuffer = (text: string): Buffer => Buffer.from(decodeBase64(text));
  const printer = new PdfPrinter({
    DejaVu: { normal: toBuffer(DEJAVU_SANS_REGULAR), bold: toBuffer(DEJAVU_SANS_BOLD) },
  });
  const doc = printer.createPdfKitDocument({
    defaultStyle: { font: 'DejaVu', fontSize: 9 },
    content: [
      { text: 'Sales report', fontSize: 20, bold: true },
      {
        table: {
          headerRows: 1,
          widths: ['auto', '*', 'auto', 'auto', 'auto'],
          body: [COLUMNS.map((text) => ({ text, bold: true })), ...cells.map((row) => [...row])], // pdfmake mutates its input
        },
      },
    ],
  });
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve());
    doc.on('error', reject);
  });
  doc.end();
  await done;
  return new Uint8Array(Buffer.concat(chunks));
}

/** The pages of a PDF. */
async function pageCount(pdf: Uint8Array): Promise<number> {
  return (await PDFDocument.load(pdf)).getPageCount();
}

/** Median time over `runs`, with the size of the last output. */
async function time(runs: number, task: () => Promise<Uint8Array>): Promise<{ ms: number; bytes: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    bytes = (await task()).length;
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)]!, bytes };
}

/** A full garbage collection, so heap figures measure live data only. */
function collect(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/**
 * Peak heap growth (MiB) while one task runs, sampled every 2 ms (the renderer yields to timers),
 * and what stays referenced at the end (the PDF bytes and the input).
 */
async function peakHeap(task: () => Promise<unknown>): Promise<number> {
  collect();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 2);
  await task();
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  clearInterval(timer);
  return (peak - base) / 2 ** 20;
}

/** Runs the benchmark and prints its figures. */
export async function run(): Promise<void> {
  const rows1k = makeRows(ROWS);
  const cells1k = cellText(rows1k);
  // Warm up every contender at full size, then time them interleaved so they share machine load;
  // every one makes a PDF of as many pages, the heading and the first and last rows on them.
  const engine = await reportEngine();
  const made = {
    renderPdf: await stepwire(rows1k),
    'the create_pdf step': await inWorkflow(engine, rows1k),
    'the pdf-lib loop': await drawTextLoop(cells1k),
    'the dressed report': await dressed(rows1k),
    pdfmake: await pdfmake(cells1k),
  };
  const pages = await pageCount(made.renderPdf);
  check(pages > 1, `the report takes more than one page (${pages})`);
  for (const [name, pdf] of Object.entries(made)) {
    checkEqual(new TextDecoder().decode(pdf.subarray(0, 5)), '%PDF-', `${name} makes a PDF`);
    if (name !== 'pdfmake' && name !== 'the dressed report')
      checkEqual(await pageCount(pdf), pages, `${name} makes a PDF of ${pages} pages`);
  }
  checkEqual(made['the create_pdf step'], made.renderPdf, 'the step renders what renderPdf renders');
  const oursTimes: number[] = [];
  const stepTimes: number[] = [];
  const loopTimes: number[] = [];
  const makerTimes: number[] = [];
  const dressedTimes: number[] = [];
  let oursBytes = 0;
  let loopBytes = 0;
  let makerBytes = 0;
  for (let i = 0; i < ROUNDS; i++) {
    // renderPdf and the step back to back, in turns first, so neither always pays for the other's garbage.
    const step = i % 2 ? await time(1, () => inWorkflow(engine, rows1k)) : undefined;
    const a = await time(1, () => stepwire(rows1k));
    stepTimes.push((step ?? (await time(1, () => inWorkflow(engine, rows1k)))).ms);
    const b = await time(1, () => drawTextLoop(cells1k));
    dressedTimes.push((await time(1, () => dressed(rows1k))).ms);
    oursTimes.push(a.ms);
    loopTimes.push(b.ms);
    oursBytes = a.bytes;
    loopBytes = b.bytes;
    if (i < 3) {
      const c = await time(1, () => pdfmake(cells1k));
      makerTimes.push(c.ms);
      makerBytes = c.bytes;
    }
  }
  const median = (values: number[]): number =>
    [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
  const ours = { ms: median(oursTimes), bytes: oursBytes };
  const loop = { ms: median(loopTimes), bytes: loopBytes };
  const maker = { ms: median(makerTimes), bytes: makerBytes };
  const fmt = (n: number): string => n.toFixed(1);
  console.log(`pdf: ${ROWS.toLocaleString('en')} rows x 5 columns + heading (median)`);
  console.log(`  renderPdf          ${fmt(ours.ms)} ms  ${ours.bytes} bytes`);
  console.log(
    `  pdf-lib drawText   ${fmt(loop.ms)} ms  ${loop.bytes} bytes  (renderPdf / loop = ${(ours.ms / loop.ms).toFixed(2)})`,
  );
  console.log(
    `  pdfmake 0.2        ${fmt(maker.ms)} ms  ${maker.bytes} bytes  (renderPdf / pdfmake = ${(ours.ms / maker.ms).toFixed(2)})`,
  );
  const dressedMs = median(dressedTimes);
  console.log(
    `  with header, logo, footer, page X of Y  ${fmt(dressedMs)} ms  (dressed / plain = ${(dressedMs / ours.ms).toFixed(2)}, goal <= 1.2;` +
      ` dressed / loop = ${(dressedMs / loop.ms).toFixed(2)}, goal <= 0.3)`,
  );
  const step = median(stepTimes);
  console.log(
    `  create_pdf step    ${fmt(step)} ms  in a workflow run  (step / renderPdf = ${(step / ours.ms).toFixed(2)}; goal <= 1.2)`,
  );
  console.log('pdf: scaling of renderPdf (median time; peak heap growth while rendering)');
  const scale: { rows: number; ms: number; heap: number }[] = [];
  for (const count of SCALE) {
    const rows = makeRows(count);
    const { ms, bytes } = await time(sized(3, 1), () => stepwire(rows));
    const heap = await peakHeap(() => stepwire(rows));
    scale.push({ rows: count, ms, heap });
    console.log(
      `  ${String(count).padStart(6)} rows  ${fmt(ms).padStart(8)} ms  +${fmt(heap)} MiB  ${bytes} bytes`,
    );
  }
  const first = scale[0]!;
  const last = scale[scale.length - 1]!;
  console.log(
    `  ${last.rows.toLocaleString('en')} / ${first.rows.toLocaleString('en')} rows: time ${(last.ms / first.ms).toFixed(1)}x, heap ${(last.heap / first.heap).toFixed(1)}x;` +
      ` marginal cost ${(((last.ms - first.ms) / (last.rows - first.rows)) * 1000).toFixed(1)} µs and` +
      ` ${(((last.heap - first.heap) * 2 ** 20) / (last.rows - first.rows) / 1024).toFixed(2)} KiB per row`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
