// Approvals over HTTP on examples/app and its access policy: the inbox and page a signed-in
// manager decides on (a POST with the session's form token), a single-use link for an outside
// approver, and the mail scanner: GET and HEAD of every approval URL, signed or not, decide nothing.
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { loadProject } from '../../src/node/index.js';
import type { RunRecord } from '../../src/index.js';

const ORIGIN = 'http://127.0.0.1:8787';
const PASSWORD = 'correct horse battery staple';
const FORM = { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' };

async function server() {
  const { engine } = await loadProject('examples/app');
  await engine.users.create({
    email: 'meg@example.com',
    name: 'Meg',
    roles: ['manager'],
    password: PASSWORD,
  });
  await engine.users.create({ email: 'sam@example.com', name: 'Sam', roles: ['sales'], password: PASSWORD });
  await engine.users.create({
    email: 'fin@example.com',
    name: 'Fin',
    roles: ['finance'],
    password: PASSWORD,
  });
  await engine.workflows.create({
    name: 'refund',
    workflow_input: {
      name: 'input',
      input_schema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
    },
    steps: [
      {
        name: 'approve',
        type: 'wait',
        wait_data: {
          kind: 'approval',
          title: 'Refund <b>{{input.amount}}</b>',
          assignees: { roles: ['manager'] },
          show: { Amount: '{{input.amount}}' },
          form: { type: 'object', properties: { reason: { type: 'string' } } },
        },
      },
    ],
    wires: [],
  });
  const handler = createHandler(engine);
  const send = (path: string, init: RequestInit = {}) => handler(new Request(`${ORIGIN}${path}`, init));
  const waiting = await engine.run('refund', { amount: 120 });
  expect(waiting.status).toBe('waiting');
  return { engine, send, waiting, id: waiting.steps[0]!.wait!.id };
}

async function signIn(send: (path: string, init?: RequestInit) => Promise<Response>, email: string) {
  const answer = await send('/sign-in', {
    method: 'POST',
    headers: FORM,
    body: new URLSearchParams({ email, password: PASSWORD, next: '/approvals' }).toString(),
  });
  expect(answer.status).toBe(303);
  return answer.headers.get('set-cookie')!.split(';')[0]!;
}

/** The `_csrf` token of the first form of a page. */
function csrfOf(page: string): string {
  return /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
}

async function settled(engine: { getRun(id: string): Promise<RunRecord> }, id: string): Promise<RunRecord> {
  for (let i = 0; i < 400; i++) {
    const record = await engine.getRun(id);
    if (record.status !== 'waiting' && record.status !== 'running') return record;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the run did not go on');
}

describe('approvals over HTTP', () => {
  it('a signed-in manager sees the inbox, opens the page (values escaped) and decides with its form', async () => {
    const { engine, send, waiting, id } = await server();
    const cookie = await signIn(send, 'meg@example.com');
    const inbox = await send('/approvals', { headers: { cookie, accept: 'text/html' } });
    expect(inbox.status).toBe(200);
    expect(inbox.headers.get('content-security-policy')).toContain("default-src 'none'");
    const list = await inbox.text();
    expect(list).toContain(`href="/approvals/${id}"`);
    // The title came from the input: it is shown as text, never as markup.
    expect(list).toContain('Refund &lt;b&gt;120&lt;/b&gt;');
    expect(list).not.toContain('<b>120</b>');

    const page = await (await send(`/approvals/${id}`, { headers: { cookie, accept: 'text/html' } })).text();
    expect(page).toContain('<dt>Amount</dt><dd>120</dd>');
    expect(page).toContain(`action="/approvals/${id}/decide"`);
    // A form without the session's token (made by another page) is refused and decides nothing.
    const forged = await send(`/approvals/${id}/decide`, {
      method: 'POST',
      headers: { ...FORM, cookie },
      body: new URLSearchParams({ decision: 'approve' }).toString(),
    });
    expect(forged.status).toBe(403);
    // Another site's page cannot send it either.
    const crossSite = await send(`/approvals/${id}/decide`, {
      method: 'POST',
      headers: { ...FORM, cookie, 'sec-fetch-site': 'same-site' },
      body: new URLSearchParams({ decision: 'approve', _csrf: csrfOf(page) }).toString(),
    });
    expect(crossSite.status).toBe(403);
    expect((await engine.approvals.get(id)).decisions).toEqual([]);

    const decided = await send(`/approvals/${id}/decide`, {
      method: 'POST',
      headers: { ...FORM, cookie },
      body: new URLSearchParams({
        decision: 'approve',
        _csrf: csrfOf(page),
        comment: 'ok',
        'data.reason': 'damaged',
      }).toString(),
    });
    expect(decided.status).toBe(303);
    expect(decided.headers.get('location')).toBe(`/approvals/${id}`);
    const done = await settled(engine, waiting.id);
    expect(done.status).toBe('succeeded');
    expect(done.steps[0]!.output).toMatchObject({
      approved: true,
      decisions: [{ approved: true, comment: 'ok', data: { reason: 'damaged' } }],
    });
  });

  it('the JSON API: finance reads but may not decide (403), sales sees nothing (404), a manager decides once (then 409)', async () => {
    const { send, id } = await server();
    const sam = await signIn(send, 'sam@example.com');
    const fin = await signIn(send, 'fin@example.com');
    const meg = await signIn(send, 'meg@example.com');
    const json = { 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' };
    expect(await (await send('/approvals', { headers: { cookie: sam } })).json()).toEqual([]);
    // sales reads only its own runs: the approval of another's run is not there for it.
    expect((await send(`/approvals/${id}`, { headers: { cookie: sam } })).status).toBe(404);
    // finance reads every run (runs.read), so it sees the approval, but may not decide it.
    expect((await send(`/approvals/${id}`, { headers: { cookie: fin } })).status).toBe(200);
    for (const cookie of [sam, fin]) {
      const refused = await send(`/approvals/${id}/decision`, {
        method: 'POST',
        headers: { ...json, cookie },
        body: JSON.stringify({ approved: true }),
      });
      expect(refused.status).toBe(cookie === sam ? 404 : 403);
    }
    const ok = await send(`/approvals/${id}/decision`, {
      method: 'POST',
      headers: { ...json, cookie: meg },
      body: JSON.stringify({ approved: false, comment: 'no' }),
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ status: 'rejected' });
    const again = await send(`/approvals/${id}/decision`, {
      method: 'POST',
      headers: { ...json, cookie: meg },
      body: JSON.stringify({ approved: true }),
    });
    expect(again.status).toBe(409);
  });

  it('an outside approver decides once with a link; a used, wrong or expired link is 404', async () => {
    const { engine, send, waiting, id } = await server();
    const link = await engine.approvals.link(id, { email: 'Auditor@Example.com' });
    const page = await send(link.path);
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain(`action="/approvals/${id}/respond"`);
    const token = new URL(`${ORIGIN}${link.path}`).searchParams.get('token')!;
    const answer = await send(`/approvals/${id}/respond`, {
      method: 'POST',
      headers: FORM,
      body: new URLSearchParams({ token, decision: 'approve', comment: 'checked' }).toString(),
    });
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain('Approved');
    const done = await settled(engine, waiting.id);
    expect(done.steps[0]!.output).toMatchObject({ decisions: [{ by: 'link:auditor@example.com' }] });
    // Used: the page and the form are gone.
    expect((await send(link.path)).status).toBe(404);
    const reused = await send(`/approvals/${id}/respond`, {
      method: 'POST',
      headers: FORM,
      body: new URLSearchParams({ token, decision: 'reject' }).toString(),
    });
    expect(reused.status).toBe(404);
    expect((await send(`/approvals/${id}/respond?token=swa_${'0'.repeat(64)}`)).status).toBe(404);
    await expect(
      engine.approvals.link(id, { email: 'x@example.com', expires: '2000-01-01T00:00:00Z' }),
    ).rejects.toMatchObject({
      code: 'conflict',
    });
  });

  it('the mail scanner: GET and HEAD of every approval URL, with a link token or a session, decide nothing', async () => {
    const { engine, send, id } = await server();
    const link = await engine.approvals.link(id, { email: 'outside@example.com' });
    const cookie = await signIn(send, 'meg@example.com');
    const urls = [
      '/approvals',
      `/approvals/${id}`,
      `/approvals/${id}/decision`,
      `/approvals/${id}/decide`,
      `/approvals/${id}/decide?decision=approve`,
      link.path,
      `${link.path}&decision=approve`,
      `/approvals/${id}/link`,
    ];
    for (const url of urls)
      for (const method of ['GET', 'HEAD'])
        for (const headers of [{}, { cookie }, { cookie, accept: 'text/html' }])
          await send(url, { method, headers });
    const approval = await engine.approvals.get(id);
    expect(approval.status).toBe('waiting');
    expect(approval.decisions).toEqual([]);
    // The link still works: opening it did not use it.
    expect((await send(link.path)).status).toBe(200);
  });

  it('without credentials the inbox sends a browser to sign in and an API client gets 401', async () => {
    const { send } = await server();
    const browser = await send('/approvals', { headers: { accept: 'text/html' } });
    expect(browser.status).toBe(303);
    expect(browser.headers.get('location')).toBe('/sign-in?next=%2Fapprovals');
    expect((await send('/approvals')).status).toBe(401);
  });

  it('events over HTTP need events.send', async () => {
    const { engine, send } = await server();
    const sam = await signIn(send, 'sam@example.com');
    const json = { 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' };
    const refused = await send('/events/order.paid', {
      method: 'POST',
      headers: { ...json, cookie: sam },
      body: '{}',
    });
    expect(refused.status).toBe(403);
    const key = await engine.keys.create({ name: 'shop', roles: ['admin'] });
    const sent = await send('/events/order.paid', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key.secret}` },
      body: JSON.stringify({ order: 7 }),
    });
    expect(sent.status).toBe(200);
    expect(await sent.json()).toMatchObject({ resumed: [] });
    const bad = await send('/events/not%20a%20name', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key.secret}` },
      body: '{}',
    });
    expect(bad.status).toBe(400);
  });
});
