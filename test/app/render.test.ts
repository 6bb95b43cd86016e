import { describe, expect, it } from 'vitest';
import { renderScreen, type Component } from '../../src/index.js';
import { appEngine, shopApp } from './helpers.js';

const MARKUP = '<script>alert("x")</script><img src=x onerror=alert(1)>';

/** Texts of every `<script` in the page: there must be none (the page itself has no script). */
function scripts(html: string): number {
  return (html.match(/<script/gi) ?? []).length;
}

describe('renderScreen', () => {
  it('renders a semantic page: lang, title, main, h1, label bound to input, number attributes', async () => {
    const { engine } = await appEngine();
    const app = await engine.applications.open('shop');
    const html = renderScreen('shop', await app.screen('notes', { who: 'Ann' }), { basePath: '/api/' });
    expect(html.startsWith('<!doctype html>\n<html lang="en">')).toBe(true);
    expect(html).toContain('<title>Notes for Ann · shop</title>');
    expect(html).toMatch(/<main>[\s\S]*<h1>Notes for Ann<\/h1>[\s\S]*<\/main>/);
    expect(html).toContain(
      '<label for="f-add-1">Amount<span class="required" aria-hidden="true"> *</span></label><input type="number" id="f-add-1" name="amount" min="0" max="1000" step="0.5" required aria-describedby="f-add-1-hint"><p class="field-hint" id="f-add-1-hint">From 0 to 1000, in steps of 0.5.</p>',
    );
    expect(html).toContain('<input type="checkbox" id="f-add-2" name="paid" value="on">');
    expect(html).toContain('<input type="date" id="f-add-3" name="due">');
    expect(html).toContain(
      '<form method="post" action="/api/applications/shop/screens/notes/forms/add?who=Ann"',
    );
    expect(html).toContain('<caption>notes (page 1)</caption>');
    expect(html).toContain('<th scope="col" class="num">id</th>');
    expect(html).toContain('<nav class="pager" aria-label="Pages of notes">');
    expect(html).toContain(
      '<a rel="next" href="/api/applications/shop/screens/notes?who=Ann&amp;grid_page=2">Next</a>',
    );
    expect(html).toContain(
      '<a class="button" href="/api/applications/shop/screens/notes?who=Ann">Same, for Ann</a>',
    );
    expect(scripts(html)).toBe(0);
  });

  it('marks an item invalid, points to its error and shows a form-level alert', async () => {
    const { engine } = await appEngine();
    const app = await engine.applications.open('shop');
    const result = await app.submit('start', 'lookup', { customer_id: 'abc' });
    if (result.ok) throw new Error('expected a failure');
    const html = renderScreen('shop', result.screen);
    expect(html).toContain(
      '<input type="number" id="f-lookup-0" name="customer_id" value="abc" min="1" step="any" required aria-invalid="true" aria-describedby="f-lookup-0-hint f-lookup-0-error"><p class="field-hint" id="f-lookup-0-hint">At least 1.</p>',
    );
    expect(html).toContain(
      '<p class="field-error" id="f-lookup-0-error">Customer must be a number, got &quot;abc&quot;</p>',
    );
    expect(html).toMatch(/<div class="form-error" role="alert" id="f-lookup-error">.*<a href="#f-lookup-0">/);
  });

  it('escapes markup in texts, query params, cells, labels, button labels and re-rendered values', async () => {
    const { engine } = await appEngine();
    const config = shopApp() as any;
    const notes = config.screens[2];
    notes.components[0][0].text.contents = `${MARKUP} {{query_params.who}}`;
    notes.components[2][0].form.form_items[0].label = `Note ${MARKUP}`;
    notes.components[3][0].button.label = `Go ${MARKUP}`;
    notes.components[0].push({ name: 'para', type: 'text', text: { contents: `'single' & "double"` } });
    await engine.applications.put('shop', config);
    const app = await engine.applications.open('shop');
    const result = await app.submit(
      'notes',
      'add',
      { note: `"><script>alert(3)</script>`, amount: 'x<y' },
      { who: MARKUP, '"><script>': MARKUP },
    );
    if (result.ok) throw new Error('expected a failure');
    const html = renderScreen('shop', result.screen);
    expect(scripts(html)).toBe(0);
    expect(html).not.toContain('<img');
    expect(html).toContain(
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;',
    );
    // the hostile cell of the notes entity
    expect(html).toContain(
      '<td data-label="text">&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;&amp;amp;</td>',
    );
    expect(html).toContain('value="&quot;&gt;&lt;script&gt;alert(3)&lt;/script&gt;"');
    expect(html).toContain('value="x&lt;y"');
    expect(html).toContain('<p>&#39;single&#39; &amp; &quot;double&quot;</p>');
    // query params in the form action and links are URL-encoded, then escaped
    expect(html).toContain('action="/applications/shop/screens/notes/forms/add?who=%3Cscript%3E');
    expect(html).toContain('%22%3E%3Cscript%3E=');
  });

  it('escapes the app name and never builds a javascript: or outside link', async () => {
    const { engine } = await appEngine();
    const app = await engine.applications.open('shop');
    const screen = await app.screen('orders', { customer: 'javascript:alert(1)' });
    const html = renderScreen('<b>"shop', screen, { basePath: '//evil.com' });
    expect(html).toContain(
      '<a href="/evil.com/applications/%3Cb%3E%22shop/screens/start">&lt;b&gt;&quot;shop</a>',
    );
    const hrefs = [...html.matchAll(/(?:href|action)="([^"]*)"/g)].map((m) => m[1]!);
    expect(hrefs.length).toBeGreaterThan(2);
    for (const href of hrefs) expect(href).toMatch(/^\/evil\.com\/applications\/%3Cb%3E%22shop\/screens\//);
  });
});

describe('HTML ids', () => {
  it('are unique on a screen whatever its form names: é9 and น, a and a-0', async () => {
    const { engine } = await appEngine();
    const form = (name: string): Component => ({
      name,
      type: 'form',
      form: {
        form_items: [
          { label: 'Note', name: 'note', type: 'text' },
          { label: 'Amount', name: 'amount', type: 'number' },
        ],
        job: { type: 'sync', workflow_name: 'note' },
      },
    });
    await engine.applications.put('names', {
      start_screen_url: 's',
      screens: [{ url: 's', components: [['é9', '\u0e99', 'a', 'a-0'].map(form)] }],
    });
    const app = await engine.applications.open('names');
    const html = renderScreen('names', await app.screen('s'));
    const ids = [...html.matchAll(/ id="([^"]+)"/g)].map((match) => match[1]);
    expect(ids.length).toBeGreaterThanOrEqual(8);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain('f-a-0');
    expect(ids).toContain('f-a_2d_0-0');
  });
});
