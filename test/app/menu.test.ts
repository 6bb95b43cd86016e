// The application's menu: on every screen, in the bar, as a navigation landmark named "Menu", its
// links encoded as redirects are, the entry of the current screen marked aria-current="page".
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { isValidationError } from '../../src/index.js';
import { all, attr, crmApp, crmEngine, one, text, within, parentTag } from './grid-dom.js';

async function menuOf(path: string) {
  const { engine } = await crmEngine();
  const response = await createHandler(engine)(new Request(`http://localhost${path}`));
  expect(response.status).toBe(200);
  const html = await response.text();
  const nav = one(html, 'nav', (n) => attr(n, 'aria-label') === 'Menu');
  expect(parentTag(nav)).toBe('header');
  return within(nav, 'a').map((a) => [text(a), attr(a, 'href'), attr(a, 'aria-current') ?? null]);
}

describe('application menu', () => {
  it('shows on every screen, marking the current one', async () => {
    expect(await menuOf('/applications/crm/screens/customers?list_page=2')).toEqual([
      ['Customers', '/applications/crm/screens/customers', 'page'],
      ['Berlin', '/applications/crm/screens/customers?city=Berlin', null],
      ['Report', '/applications/crm/screens/report', null],
    ]);
    // The entry whose parameters the address has, the most of them, is the current one.
    expect((await menuOf('/applications/crm/screens/customers?city=Berlin')).map((m) => m[2])).toEqual([
      null,
      'page',
      null,
    ]);
    expect((await menuOf('/applications/crm/screens/report')).map((m) => m[2])).toEqual([null, null, 'page']);
    // A screen the menu does not name marks nothing.
    expect((await menuOf('/applications/crm/screens/customer?id=1')).map((m) => m[2])).toEqual([
      null,
      null,
      null,
    ]);
  });

  it('escapes its labels, and an app without a menu has no menu', async () => {
    const { engine } = await crmEngine();
    const config = crmApp();
    config.menu = [{ label: '<b>Bold</b> & "more"', url: '/screens/report?x=a b' }];
    await engine.applications.put('crm', config);
    const html = await (
      await createHandler(engine)(new Request('http://localhost/applications/crm/screens/report'))
    ).text();
    const link = one(html, 'a', (a) => text(a) === '<b>Bold</b> & "more"');
    expect(attr(link, 'href')).toBe('/applications/crm/screens/report?x=a%20b');
    expect(all(html, 'b').length).toBe(0);
    delete config.menu;
    await engine.applications.put('crm', config);
    const bare = await (
      await createHandler(engine)(new Request('http://localhost/applications/crm/screens/report'))
    ).text();
    expect(all(bare, 'nav', (n) => attr(n, 'aria-label') === 'Menu').length).toBe(0);
  });

  it('refuses a menu entry that opens no screen of the app', async () => {
    const { engine } = await crmEngine();
    const config = crmApp();
    config.menu = [
      { label: 'Away', url: 'https://evil.example/' },
      { label: 'Gone', url: '/screens/gone' },
    ];
    const error = await engine.applications.put('crm', config).catch((e: unknown) => e);
    expect(isValidationError(error)).toBe(true);
    expect(
      (error as { issues: { code: string; path: string }[] }).issues.map((i) => [i.code, i.path]),
    ).toEqual([
      ['invalid_redirect', 'menu[0].url'],
      ['unknown_screen', 'menu[1].url'],
    ]);
  });
});
