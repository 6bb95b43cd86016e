import { describe, expect, it } from 'vitest';
import { CancelledError, LimitError, ValidationError } from '../../src/errors/index.js';
import { renderPdf, type PdfVariable } from '../../src/pdf/index.js';
import { pdfInfo, pdfText, textLines, itWithPoppler } from './poppler.js';

async function text(template: string, variables?: PdfVariable[]): Promise<string> {
  return pdfText(await renderPdf(variables ? { template, variables } : { template }));
}

async function validationIssues(promise: Promise<unknown>): Promise<ValidationError['issues']> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  return (error as ValidationError).issues;
}

describe('renderPdf: text', () => {
  itWithPoppler('renders headings, paragraphs, bold, italic, line breaks and lists in order', async () => {
    const out = await text(
      '<h1>Invoice</h1><h3>Details</h3><p>Hello <b>bold</b> and <em>italic</em>.<br>Second line</p>' +
        '<ul><li>Apples</li><li>Pears</li></ul><ol start="3"><li>Third</li><li>Fourth</li></ol><hr><p>End</p>',
    );
    expect(textLines(out)).toEqual([
      'Invoice',
      'Details',
      'Hello bold and italic.',
      'Second line',
      '• Apples',
      '• Pears',
      '3. Third',
      '4. Fourth',
      'End',
    ]);
  });

  itWithPoppler('wraps long paragraphs within the margins and breaks pages', async () => {
    const words = Array.from({ length: 4000 }, (_, i) => `word${i}`).join(' ');
    const bytes = await renderPdf({ template: `<p>${words}</p>` });
    const out = pdfText(bytes);
    expect(Number(pdfInfo(bytes)['Pages'])).toBeGreaterThan(2);
    const lines = textLines(out);
    expect(lines.length).toBeGreaterThan(100);
    expect(lines.join(' ').split(' ')).toEqual(words.split(' '));
  });

  itWithPoppler('keeps room for the text of lists and quotes nested 40 deep', async () => {
    for (const tag of ['ul', 'blockquote']) {
      const inner = tag === 'ul' ? '<li>visible text [[.v]]</li>' : '<p>visible text [[.v]]</p>';
      const template = `<${tag}>`.repeat(40) + inner + `</${tag}>`.repeat(40);
      const out = await text(template, [{ name: 'v', value_type: 'STRING', value: 'VALUE' }]);
      expect(out.replace(/\s+/g, ' ').trim()).toMatch(/^(• )?visible text VALUE$/);
    }
  });

  itWithPoppler('renders Latin with accents, Greek and Cyrillic', async () => {
    const out = await text('<h2>Ελληνικά</h2><p>Кириллица and Crème brûlée, Łódź, ÆØÅ, € 5</p>');
    expect(out).toContain('Ελληνικά');
    expect(out).toContain('Кириллица');
    expect(out).toContain('Crème brûlée');
    expect(out).toContain('Łódź');
    expect(out).toContain('€ 5');
  });

  itWithPoppler('prints characters the font lacks as ?', async () => {
    expect(await text('<p>tea 茶 ok</p>')).toContain('tea ? ok');
  });

  itWithPoppler('degrades unknown tags to their text and drops script and style content', async () => {
    const out = await text(
      '<style>p { color: red }</style><p>Keep <blink>this</blink> <custom-tag x="1">text</custom-tag>' +
        '<script>alert("no")</script> <span>here</span></p><!-- hidden -->',
    );
    expect(textLines(out)).toEqual(['Keep this text here']);
  });

  itWithPoppler('sets the document title from <title> and fixed metadata', async () => {
    const info = pdfInfo(
      await renderPdf({
        template: '<html><head><title>Invoice [[.n]]</title></head><body>x</body></html>',
        variables: [{ name: 'n', value_type: 'NUMBER', value: 7 }],
      }),
    );
    expect(info['Title']).toBe('Invoice 7');
    expect(info['Producer']).toBe('stepwire');
    expect(info['Creator']).toBe('stepwire');
  });

  it('gives the same bytes for the same input', async () => {
    const input = {
      template: '<h1>Report</h1><p>Ελληνικά <b>bold</b></p>[[.t]]',
      variables: [
        {
          name: 't',
          value_type: 'TABLE' as const,
          value: {
            columns: [{ name: 'a' }, { name: 'b' }],
            rows: Array.from({ length: 200 }, (_, i) => [i, `row ${i}`]),
          },
        },
      ],
    };
    const first = await renderPdf(input);
    const second = await renderPdf(input);
    expect(second).toEqual(first);
  });
});

describe('renderPdf: variables', () => {
  itWithPoppler('inserts values as text: markup in a value prints literally', async () => {
    const out = await text('<p>Name: [[.name]] / [[ .n ]] / [[.ok]] / [[.when]]</p>', [
      { name: 'name', value_type: 'STRING', value: '<b>x</b> &amp; <script>y</script>' },
      { name: 'n', value_type: 'NUMBER', value: 12.5 },
      { name: 'ok', value_type: 'BOOLEAN', value: true },
      { name: 'when', value_type: 'DATE', value: '2024-05-06T10:00:00Z' },
    ]);
    expect(textLines(out)).toEqual(['Name: <b>x</b> &amp; <script>y</script> / 12.5 / true / 2024-05-06']);
  });

  itWithPoppler('keeps the style around a marker and turns newlines in values into line breaks', async () => {
    const out = await text('<p><b>[[.address]]</b></p>', [
      { name: 'address', value_type: 'STRING', value: '1 Main St\nSpringfield' },
    ]);
    expect(textLines(out)).toEqual(['1 Main St', 'Springfield']);
  });

  it('rejects a marker naming no variable, naming it', async () => {
    const issues = await validationIssues(
      renderPdf({
        template: '<p>[[.total]] and [[.missing]]</p>',
        variables: [{ name: 'total', value_type: 'NUMBER', value: 1 }],
      }),
    );
    expect(issues).toEqual([
      expect.objectContaining({
        code: 'unknown_variable',
        path: 'variables',
        message: expect.stringContaining('[[.missing]]'),
      }),
    ]);
  });

  it('rejects a value that does not match its value_type, naming the variable', async () => {
    const issues = await validationIssues(
      renderPdf({
        template: '[[.a]] [[.b]] [[.c]]',
        variables: [
          { name: 'a', value_type: 'NUMBER', value: 'abc' },
          { name: 'b', value_type: 'TABLE', value: { columns: 'x', rows: [] } },
          { name: 'c', value_type: 'BOOLEAN', value: 1 },
        ],
      }),
    );
    expect(issues.map((issue) => issue.path)).toEqual([
      'variables[0].value',
      'variables[1].value.columns',
      'variables[2].value',
    ]);
    expect(issues[0]!.message).toContain('"a"');
    expect(issues[1]!.message).toContain('"b"');
    expect(issues[2]!.message).toContain('"c"');
  });

  it('refuses elements nested more than 256 deep at once, naming the template; void and implied closes do not count', async () => {
    const started = performance.now();
    const issues = await validationIssues(renderPdf({ template: '<div>'.repeat(200_000) + 'x' }));
    expect(performance.now() - started).toBeLessThan(5_000); // it took 7.7 s of blocked process before
    expect(issues).toEqual([
      {
        code: 'too_deep',
        path: 'template',
        message: 'the template nests elements more than 256 deep (at a <div>); close the elements it opens',
      },
    ]);
    const fine = '<div>'.repeat(255) + '<br>'.repeat(1000) + '<p>a'.repeat(1000) + '</div>'.repeat(255);
    expect((await renderPdf({ template: fine })).length).toBeGreaterThan(0);
  });

  it('rejects an unsupported template_type', async () => {
    const issues = await validationIssues(renderPdf({ template: 'x', template_type: 'markdown' as 'html' }));
    expect(issues[0]!.path).toBe('template_type');
  });
});

describe('renderPdf: options and limits', () => {
  itWithPoppler('uses A4 by default, Letter or a custom size on request', async () => {
    expect(pdfInfo(await renderPdf({ template: 'x' }))['Page size']).toMatch(
      /^595\.2\d? x 841\.8\d? pts \(A4\)/,
    );
    expect(pdfInfo(await renderPdf({ template: 'x' }, { page: { size: 'Letter' } }))['Page size']).toMatch(
      /^612 x 792 pts/,
    );
    expect(
      pdfInfo(await renderPdf({ template: 'x' }, { page: { size: [300, 400], margins: 20 } }))['Page size'],
    ).toMatch(/^300 x 400 pts/);
  });

  itWithPoppler('wider margins give more pages', async () => {
    const template = `<p>${'lorem ipsum dolor '.repeat(900)}</p>`;
    const narrow = Number(pdfInfo(await renderPdf({ template }, { page: { margins: 20 } }))['Pages']);
    const wide = Number(
      pdfInfo(
        await renderPdf(
          { template },
          { page: { margins: { top: 150, right: 150, bottom: 150, left: 150 } } },
        ),
      )['Pages'],
    );
    expect(wide).toBeGreaterThan(narrow);
  });

  it('throws LimitError pdf.maxBytes when the PDF is too large', async () => {
    const words = Array.from({ length: 20000 }, (_, i) => `w${(i * 7919) % 100003}`).join(' ');
    const error = await renderPdf({ template: `<p>${words}</p>` }, { maxBytes: 20_000 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LimitError);
    expect((error as LimitError).limit).toBe('pdf.maxBytes');
  });

  it('stops with CancelledError when the signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(renderPdf({ template: 'x' }, { signal: controller.signal })).rejects.toBeInstanceOf(
      CancelledError,
    );
  });

  it('stops a long render when the signal aborts between pages', async () => {
    const rows = Array.from({ length: 30000 }, (_, i) => [i, `row ${i}`]);
    const signal = AbortSignal.timeout(50);
    await expect(
      renderPdf(
        {
          template: '[[.t]]',
          variables: [{ name: 't', value_type: 'TABLE', value: { columns: null, rows } }],
        },
        { signal },
      ),
    ).rejects.toBeInstanceOf(CancelledError);
  });

  it('rejects a bad page option with a TypeError naming it', async () => {
    await expect(renderPdf({ template: 'x' }, { page: { margins: -1 } })).rejects.toThrow(/page\.margins/);
    await expect(renderPdf({ template: 'x' }, { page: { size: 'A5' as 'A4' } })).rejects.toThrow(
      /page\.size/,
    );
  });
});

describe('renderPdf bounds what markers place', () => {
  it('refuses a template whose markers place more than 16 Mi characters, before laying anything out', async () => {
    const template = `<p>${'[[.a]]'.repeat(20_000)}</p>`;
    const variables: PdfVariable[] = [{ name: 'a', value_type: 'STRING', value: 'x'.repeat(1000) }];
    const error = await renderPdf({ template, variables }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LimitError);
    expect((error as LimitError).limit).toBe('pdf.text');
  });
});
