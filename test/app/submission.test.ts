import { describe, expect, it } from 'vitest';
import { handleScreenRoute } from '../../src/http/screens.js';
import type { Component } from '../../src/index.js';
import { appEngine } from './helpers.js';

const post = (url: string, body: string) =>
  new Request(`http://localhost${url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost' },
    body,
  });

describe('one-time submission tokens', () => {
  it('a double submit of one rendered form runs the workflow once, and both answers redirect to the same place', async () => {
    const { engine } = await appEngine();
    const app = await engine.applications.open('shop');
    const screen = await app.screen('notes');
    const form = screen.rows.flat().find((c) => c.type === 'form' && c.name === 'add') as {
      submission: string | null;
    };
    expect(form.submission).toMatch(/^[0-9a-f-]{36}$/);
    const route = { app: 'shop', screen: 'notes', form: 'add' };
    const body = `note=hello&amount=2&_submission=${form.submission}`;
    const [first, second] = await Promise.all([
      handleScreenRoute(engine, post('/applications/shop/screens/notes/forms/add', body), route, {}),
      handleScreenRoute(engine, post('/applications/shop/screens/notes/forms/add', body), route, {}),
    ]);
    expect(first.status).toBe(303);
    expect(second.status).toBe(303);
    expect(second.headers.get('location')).toBe(first.headers.get('location'));
    expect((await engine.listRuns({ workflow: 'note' })).runs).toHaveLength(1);
    // A new render gives a new token, so the next submit runs again.
    const next = (await app.screen('notes')).rows
      .flat()
      .find((c) => c.type === 'form' && c.name === 'add') as {
      submission: string;
    };
    expect(next.submission).not.toBe(form.submission);
    const html = await (
      await handleScreenRoute(
        engine,
        new Request('http://localhost/applications/shop/screens/notes'),
        { app: 'shop', screen: 'notes' },
        {},
      )
    ).text();
    expect(html).toMatch(/<input type="hidden" name="_submission" value="[0-9a-f-]{36}">/);
  });

  it('a form with long names, or a control character in its name, is submitted once with its token', async () => {
    const { engine } = await appEngine();
    const long = 'f'.repeat(200);
    const items = [
      { label: 'Note', name: 'note', type: 'text' as const },
      { label: 'Amount', name: 'amount', type: 'number' as const },
    ];
    const form = (name: string): Component => ({
      name,
      type: 'form',
      form: { form_items: items, job: { type: 'sync', workflow_name: 'note' } },
    });
    const name = `${'a'.repeat(120)} app`;
    await engine.applications.put(name, {
      start_screen_url: 's'.repeat(100),
      screens: [{ url: 's'.repeat(100), components: [[form(long), form('a\tb')]] }],
    });
    const app = await engine.applications.open(name);
    const screen = await app.screen('s'.repeat(100));
    for (const component of [long, 'a\tb']) {
      const { submission } = screen.rows[0]!.find((c) => c.name === component) as { submission: string };
      const values = { note: component.slice(0, 3), amount: '1', _submission: submission };
      const [first, second] = await Promise.all([
        app.submit('s'.repeat(100), component, values),
        app.submit('s'.repeat(100), component, values),
      ]);
      expect(first.ok ? first.run?.status : first.errors, JSON.stringify(component)).toBe('succeeded');
      expect(second.ok && second.run?.id).toBe(first.run!.id);
    }
    expect((await engine.listRuns({ workflow: 'note' })).runs).toHaveLength(2);
  });
});
