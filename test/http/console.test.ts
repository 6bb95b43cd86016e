// The operator console on examples/app and its access policy: every page for a signed-in admin
// (values escaped, a menu on each), a browser without credentials sent to sign in and an API client
// answered 401, a role without the permission shown a 403 page; the cancel, retry and bulk forms
// with the session's form token; and a run's event stream in order and closed at its end.
import { describe, expect, it } from 'vitest';
import { createClient, createHandler } from '../../src/http/index.js';
import { loadProject } from '../../src/node/index.js';
import { Engine, type ActionDefinition, type RunRecord } from '../../src/index.js';
import { z } from 'zod';

const ORIGIN = 'http://127.0.0.1:8787';
const PASSWORD = 'correct horse battery staple';
const FORM = { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' };
const HTML = { accept: 'text/html,application/xhtml+xml' };
const EVIL = '<script>alert("x")</script>';

async function server() {
  const { engine } = await loadProject('examples/app');
  await engine.users.create({
    email: 'ada@example.com',
    name: 'Ada <b>',
    roles: ['admin'],
    password: PASSWORD,
  });
  await engine.users.create({ email: 'sam@example.com', name: 'Sam', roles: ['sales'], password: PASSWORD });
  await engine.workflows.create({
    name: 'echo',
    workflow_input: {
      name: 'input',
      input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    },
    steps: [
      {
        name: 'first',
        type: 'l2',
        l2_data: {
          provider: 'platform',
          module: 'dummy',
          action: 'dummy_task',
          input_data: { text: '{{input.text}}' },
        },
      },
      {
        name: 'second',
        type: 'l2',
        l2_data: {
          provider: 'platform',
          module: 'dummy',
          action: 'dummy_task',
          input_data: { again: '{{first.text}}' },
        },
      },
    ],
    wires: [],
  });
  await engine.workflows.create({
    name: 'approve_it',
    steps: [
      {
        name: 'ok',
        type: 'wait',
        wait_data: { kind: 'approval', title: `Keep ${EVIL}?`, assignees: { roles: ['admin'] } },
      },
    ],
    wires: [],
  });
  await engine.triggers.create({
    name: 'nightly',
    type: 'schedule',
    workflow_name: 'echo',
    input_data: { text: 'night' },
    schedule_data: { cron: '30 2 * * *', timezone: 'UTC' },
  });
  const handler = createHandler(engine);
  const send = (path: string, init: RequestInit = {}) => handler(new Request(`${ORIGIN}${path}`, init));
  const run = await engine.run('echo', { text: EVIL });
  expect(run.status).toBe('succeeded');
  return { engine, send, run, handler };
}

async function signIn(send: (path: string, init?: RequestInit) => Promise<Response>, email: string) {
  const answer = await send('/sign-in', {
    method: 'POST',
    headers: FORM,
    body: new URLSearchParams({ email, password: PASSWORD, next: '/console' }).toString(),
  });
  expect(answer.status).toBe(303);
  return answer.headers.get('set-cookie')!.split(';')[0]!;
}

function csrfOf(page: string): string {
  return /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
}

/** Reads an event stream to its end: each message's id and event. */
async function readStream(
  response: Response,
): Promise<{ id: string; event: { type: string; step?: string } }[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.includes('data: '))
    .map((block) => {
      const id = /^id: (.*)$/m.exec(block)![1]!;
      const data = /^data: (.*)$/m.exec(block)![1]!;
      return { id, event: JSON.parse(data) as { type: string; step?: string } };
    });
}

async function settled(engine: Engine, id: string): Promise<RunRecord> {
  for (let i = 0; i < 400; i++) {
    const record = await engine.getRun(id);
    if (!['queued', 'running', 'waiting'].includes(record.status)) return record;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`run ${id} did not end`);
}

const PAGES = [
  '/console/runs',
  '/console/runs?workflow=echo&status=succeeded',
  '/console/workflows',
  '/console/workflows/echo',
  '/console/approvals',
  '/console/triggers',
  '/console/queue',
  '/console/audit',
];

describe('the operator console', () => {
  it('shows every page to a signed-in admin, values escaped, with the menu', async () => {
    const { send, run, engine } = await server();
    const waiting = await engine.run('approve_it', {});
    const cookie = await signIn(send, 'ada@example.com');
    for (const path of [...PAGES, `/console/runs/${run.id}`, `/console/runs/${waiting.id}`]) {
      const answer = await send(path, { headers: { ...HTML, cookie } });
      const page = await answer.text();
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get('content-type'), path).toContain('text/html');
      expect(answer.headers.get('content-security-policy'), path).toContain("script-src 'self'");
      expect(page, path).toContain('aria-label="Console"');
      expect(page, path).toContain('Ada &lt;b&gt;');
      expect(page, path).not.toContain('<script>alert');
      expect(page, path).not.toContain('Ada <b>');
    }
    const runPage = await (await send(`/console/runs/${run.id}`, { headers: { ...HTML, cookie } })).text();
    expect(runPage).toContain('&lt;script&gt;alert(\\&quot;x\\&quot;)&lt;/script&gt;');
    expect(runPage).toContain('<svg');
    expect(runPage).toMatch(/<td>first<\/td><td>succeeded<\/td><td>1<\/td>/);
    // A run that has ended needs no script; a run that waits links its approval and loads the script.
    expect(runPage).not.toContain('console.js');
    const waitingPage = await (
      await send(`/console/runs/${waiting.id}`, { headers: { ...HTML, cookie } })
    ).text();
    expect(waitingPage).toContain(`/approvals/${waiting.steps[0]!.wait!.id}`);
    expect(waitingPage).toContain('<script src="/console/console.js" defer></script>');
    expect(waitingPage).toContain(`data-run-events="/runs/${waiting.id}/events"`);
    const runs = await (await send('/console/runs', { headers: { ...HTML, cookie } })).text();
    expect(runs).toContain(`/console/runs/${run.id}`);
    expect(runs).toContain('succeeded: 1<');
    expect(runs).toContain('waiting: 1<');
    const workflows = await (await send('/console/workflows', { headers: { ...HTML, cookie } })).text();
    expect(workflows).toMatch(/echo<\/a><\/td><td>2<\/td><td>1<\/td><td>100%<\/td>/);
    const approvals = await (await send('/console/approvals', { headers: { ...HTML, cookie } })).text();
    expect(approvals).toContain('Keep &lt;script&gt;');
    const triggers = await (await send('/console/triggers', { headers: { ...HTML, cookie } })).text();
    const next = /(\d{4}-\d\d-\d\dT02:30:00\.000Z)/.exec(triggers)?.[1];
    expect(next).toBeDefined();
    expect(Date.parse(next!) - Date.now()).toBeGreaterThan(0);
    expect(Date.parse(next!) - Date.now()).toBeLessThanOrEqual(24 * 3600 * 1000);
    const queue = await (await send('/console/queue', { headers: { ...HTML, cookie } })).text();
    expect(queue).toContain('no durable queue');
    const audit = await (await send('/console/audit', { headers: { ...HTML, cookie } })).text();
    expect(audit).toContain('session.sign_in');
    const script = await send('/console/console.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toContain('text/javascript');
    expect(await script.text()).toContain('new EventSource');
  });

  it('filters runs by initiator and time and pages them by key', async () => {
    const { send, engine } = await server();
    for (let i = 0; i < 55; i++) await engine.run('echo', { text: `t${i}` });
    const cookie = await signIn(send, 'ada@example.com');
    const first = await (await send('/console/runs?workflow=echo', { headers: { ...HTML, cookie } })).text();
    expect(first.match(/<tr><td><a href="\/console\/runs\//g)).toHaveLength(50);
    const older = /rel="next" href="([^"]+)"/.exec(first)![1]!.replaceAll('&amp;', '&');
    const second = await (await send(older, { headers: { ...HTML, cookie } })).text();
    expect(second.match(/<tr><td><a href="\/console\/runs\//g)).toHaveLength(6);
    expect(second).not.toContain('rel="next"');
    const host = await (await send('/console/runs?initiator=host', { headers: { ...HTML, cookie } })).text();
    expect(host.match(/<tr><td><a href="\/console\/runs\//g)).toHaveLength(50);
    const nobody = await (
      await send('/console/runs?initiator=someone', { headers: { ...HTML, cookie } })
    ).text();
    expect(nobody).toContain('No run matches.');
    const future = await (
      await send('/console/runs?since=2999-01-01', { headers: { ...HTML, cookie } })
    ).text();
    expect(future).toContain('No run matches.');
    const bad = await (await send('/console/runs?since=yesterday', { headers: { ...HTML, cookie } })).text();
    expect(bad).toContain('Not used: since must be a date');
    expect(first).toContain('succeeded: 56<');
  });

  it('pages the audit log, 100 entries a page, and filters it', async () => {
    const { send, engine } = await server();
    const ops = engine.as({ id: 'ops', kind: 'user', roles: ['admin'] });
    for (let i = 0; i < 105; i++) await ops.events.send(`ping.${i}`, {});
    const cookie = await signIn(send, 'ada@example.com');
    const first = await (
      await send('/console/audit?action=event.send', { headers: { ...HTML, cookie } })
    ).text();
    expect(first.match(/<td>event\.send<\/td>/g)).toHaveLength(100);
    expect(first).toContain('<td>event:ping.0</td>');
    const later = /rel="next" href="([^"]+)"/.exec(first)![1]!.replaceAll('&amp;', '&');
    expect(later).toContain('action=event.send');
    const second = await (await send(later, { headers: { ...HTML, cookie } })).text();
    expect(second.match(/<td>event\.send<\/td>/g)).toHaveLength(5);
    expect(second).toContain('<td>event:ping.104</td>');
    const one = await (
      await send('/console/audit?resource=event%3Aping.7', { headers: { ...HTML, cookie } })
    ).text();
    expect(one.match(/<td>event\.send<\/td>/g)).toHaveLength(1);
  });

  it('sends a browser without credentials to sign in, answers an API client 401', async () => {
    const { send, run } = await server();
    for (const path of [...PAGES, `/console/runs/${run.id}`, '/console']) {
      const browser = await send(path, { headers: HTML });
      expect(browser.status, path).toBe(303);
      expect(browser.headers.get('location'), path).toBe(`/sign-in?next=${encodeURIComponent(path)}`);
      const api = await send(path);
      expect(api.status, path).toBe(401);
    }
    expect((await send(`/runs/${run.id}/events`)).status).toBe(401);
    const post = await send(`/console/runs/${run.id}/retry`, { method: 'POST', headers: FORM, body: '' });
    expect(post.status).toBe(401);
  });

  it('shows a 403 page to a role without the permission', async () => {
    const { send, run } = await server();
    const cookie = await signIn(send, 'sam@example.com');
    for (const [path, permission] of [
      ['/console/audit', 'audit.read'],
      ['/console/workflows', 'definitions.read'],
      ['/console/workflows/echo', 'definitions.read'],
      ['/console/triggers', 'definitions.read'],
    ] as const) {
      const answer = await send(path, { headers: { ...HTML, cookie } });
      expect(answer.status, path).toBe(403);
      expect(answer.headers.get('content-type')).toContain('text/html');
      expect(await answer.text(), path).toContain(permission);
    }
    // Sales reads its own runs only: the admin's run is not found, and the list is empty.
    expect((await send(`/console/runs/${run.id}`, { headers: { ...HTML, cookie } })).status).toBe(404);
    const runs = await (await send('/console/runs', { headers: { ...HTML, cookie } })).text();
    expect(runs).toContain('No run matches.');
    expect((await send(`/runs/${run.id}/events`, { headers: { cookie } })).status).toBe(404);
    // The cancel form needs runs.cancel.
    const page = await (await send('/console/runs', { headers: { ...HTML, cookie } })).text();
    const cancel = await send(`/console/runs/${run.id}/cancel`, {
      method: 'POST',
      headers: { ...FORM, ...HTML, cookie },
      body: new URLSearchParams({ _csrf: csrfOf(page) }).toString(),
    });
    expect(cancel.status).toBe(403);
    expect(await cancel.text()).toContain('runs.cancel');
  });

  it('sends the events of an ended run in order and closes; Last-Event-ID resumes', async () => {
    const { send, run, engine, handler } = await server();
    const admin = await engine.keys.create({ name: 'ops', roles: ['admin'] });
    const auth = { authorization: `Bearer ${admin.secret}` };
    const answer = await send(`/runs/${run.id}/events`, { headers: auth });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toContain('text/event-stream');
    const events = await readStream(answer);
    expect(events.map((e) => [e.id, e.event.type, e.event.step])).toEqual([
      ['1', 'run.started', undefined],
      ['2', 'step.started', 'first'],
      ['3', 'step.succeeded', 'first'],
      ['4', 'step.started', 'second'],
      ['5', 'step.succeeded', 'second'],
      ['6', 'run.finished', undefined],
    ]);
    const resumed = await readStream(
      await send(`/runs/${run.id}/events`, { headers: { ...auth, 'last-event-id': '4' } }),
    );
    expect(resumed.map((e) => [e.id, e.event.type])).toEqual([
      ['5', 'step.succeeded'],
      ['6', 'run.finished'],
    ]);
    expect((await send(`/runs/nope/events`, { headers: auth })).status).toBe(404);
    // The typed client reads the stream to its end.
    const client = createClient({
      baseUrl: ORIGIN,
      headers: auth,
      retry: 0,
      fetch: (input, init) => handler(new Request(input, init)),
    });
    expect(await client.runEvents(run.id)).toEqual(events.map((e) => e.event));
    expect((await client.runEvents(run.id, { after: 4 })).map((e) => e.type)).toEqual([
      'step.succeeded',
      'run.finished',
    ]);
  });

  it('follows a run that waits, live, until it ends', async () => {
    const { send, engine } = await server();
    const admin = await engine.keys.create({ name: 'ops', roles: ['admin'] });
    const waiting = await engine.run('approve_it', {});
    const answer = await send(`/runs/${waiting.id}/events`, {
      headers: { authorization: `Bearer ${admin.secret}` },
    });
    const reading = readStream(answer);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await engine
      .as({ id: 'boss', kind: 'user', roles: ['admin'] })
      .approvals.decide(waiting.steps[0]!.wait!.id, {
        approved: true,
      });
    const events = await reading;
    expect(events.map((e) => e.event.type)).toEqual([
      'run.started',
      'step.started',
      'step.waiting',
      'run.waiting',
      'step.succeeded',
      'run.finished',
    ]);
    expect(events.map((e) => Number(e.id))).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('links every page under the base path the handler is mounted at', async () => {
    const { engine } = await server();
    const waiting = await engine.run('approve_it', {});
    const admin = await engine.keys.create({ name: 'ops', roles: ['admin'] });
    const handler = createHandler(engine, { basePath: '/ops' });
    const get = async (path: string) =>
      (
        await handler(
          new Request(`${ORIGIN}/ops${path}`, {
            headers: { ...HTML, authorization: `Bearer ${admin.secret}` },
          }),
        )
      ).text();
    const page = await get(`/console/runs/${waiting.id}`);
    expect(page).toContain('<script src="/ops/console/console.js" defer></script>');
    expect(page).toContain(`data-run-events="/ops/runs/${waiting.id}/events"`);
    expect(page).toContain(`action="/ops/console/runs/${waiting.id}/cancel"`);
    const hrefs = [...(await get('/console/runs')).matchAll(/(?:href|action)="([^"]+)"/g)].map((m) => m[1]!);
    expect(hrefs.length).toBeGreaterThan(10);
    expect(hrefs.filter((href) => !href.startsWith('/ops/'))).toEqual([]);
  });

  it('stops following the run when the client goes away', async () => {
    const { send, engine } = await server();
    const admin = await engine.keys.create({ name: 'ops', roles: ['admin'] });
    const waiting = await engine.run('approve_it', {});
    let reads = 0;
    const getRun = engine.getRun.bind(engine);
    engine.getRun = (id: string) => {
      reads += 1;
      return getRun(id);
    };
    const answer = await send(`/runs/${waiting.id}/events`, {
      headers: { authorization: `Bearer ${admin.secret}` },
    });
    const reader = answer.body!.getReader();
    await reader.read();
    await new Promise((resolve) => setTimeout(resolve, 1200));
    // The stream reads the record while it is open (every half second)...
    expect(reads).toBeGreaterThanOrEqual(2);
    await reader.cancel();
    const after = reads;
    await new Promise((resolve) => setTimeout(resolve, 1200));
    // ...and not once it is cancelled.
    expect(reads).toBe(after);
  });

  it('cancels a waiting run from its page; refuses a form without the session token', async () => {
    const { send, engine } = await server();
    const waiting = await engine.run('approve_it', {});
    const cookie = await signIn(send, 'ada@example.com');
    const page = await (await send(`/console/runs/${waiting.id}`, { headers: { ...HTML, cookie } })).text();
    expect(page).toContain(`action="/console/runs/${waiting.id}/cancel"`);
    const forged = await send(`/console/runs/${waiting.id}/cancel`, {
      method: 'POST',
      headers: { ...FORM, cookie },
      body: new URLSearchParams({ _csrf: 'not-it' }).toString(),
    });
    expect(forged.status).toBe(403);
    expect((await engine.getRun(waiting.id)).status).toBe('waiting');
    const answer = await send(`/console/runs/${waiting.id}/cancel`, {
      method: 'POST',
      headers: { ...FORM, cookie },
      body: new URLSearchParams({ _csrf: csrfOf(page) }).toString(),
    });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe(`/console/runs/${waiting.id}`);
    expect((await settled(engine, waiting.id)).status).toBe('cancelled');
  });
});

describe('retry and bulk actions from the console', () => {
  it('retries a run from a step and goes to the new run', async () => {
    const { send, run, engine } = await server();
    const cookie = await signIn(send, 'ada@example.com');
    const page = await (await send(`/console/runs/${run.id}`, { headers: { ...HTML, cookie } })).text();
    expect(page).toContain('<option value="second"');
    const answer = await send(`/console/runs/${run.id}/retry`, {
      method: 'POST',
      headers: { ...FORM, cookie },
      body: new URLSearchParams({ _csrf: csrfOf(page), from_step: 'second', input: '' }).toString(),
    });
    expect(answer.status).toBe(303);
    const id = /\/console\/runs\/(.+)$/.exec(answer.headers.get('location')!)![1]!;
    const retried = await settled(engine, decodeURIComponent(id));
    expect(retried.retry_of).toBe(run.id);
    expect(retried.status).toBe('succeeded');
    const bad = await send(`/console/runs/${run.id}/retry`, {
      method: 'POST',
      headers: { ...FORM, cookie },
      body: new URLSearchParams({ _csrf: csrfOf(page), input: '{not json' }).toString(),
    });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain('not JSON');
  });

  it('counts the runs of a bulk cancel first, then cancels exactly those', async () => {
    const { send, engine } = await server();
    const waiting = [await engine.run('approve_it', {}), await engine.run('approve_it', {})];
    const cookie = await signIn(send, 'ada@example.com');
    const runs = await (
      await send('/console/runs?workflow=approve_it&status=waiting', { headers: { ...HTML, cookie } })
    ).text();
    const csrf = csrfOf(runs);
    const dry = await send('/console/runs/bulk', {
      method: 'POST',
      headers: { ...FORM, cookie },
      body: new URLSearchParams({
        _csrf: csrf,
        action: 'cancel',
        workflow: 'approve_it',
        status: 'waiting',
      }).toString(),
    });
    expect(dry.status).toBe(200);
    const confirm = await dry.text();
    expect(confirm).toContain('<strong>2</strong> runs match');
    for (const run of waiting) expect((await engine.getRun(run.id)).status).toBe('waiting');
    // A run that starts after the count is not cancelled.
    const later = await engine.run('approve_it', {});
    const fields = Object.fromEntries(
      [...confirm.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [
        m[1]!,
        m[2]!.replaceAll('&amp;', '&'),
      ]),
    );
    const done = await send('/console/runs/bulk', {
      method: 'POST',
      headers: { ...FORM, cookie },
      body: new URLSearchParams(fields).toString(),
    });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toContain('acted=cancel');
    for (const run of waiting) expect((await settled(engine, run.id)).status).toBe('cancelled');
    expect((await engine.getRun(later.id)).status).toBe('waiting');
    const after = await (await send(done.headers.get('location')!, { headers: { ...HTML, cookie } })).text();
    expect(after).toContain('Cancelled 2 of the 2 runs counted.');
  });
});

describe('a failed run in the console', () => {
  it('is found among the runs, shows its error, and is retried from its failed step', async () => {
    let failing = true;
    const calls: string[] = [];
    const flaky = {
      provider: 'acme',
      module: 'test',
      action: 'flaky',
      input: z.object({ step: z.string(), fail: z.boolean().optional() }),
      run: (input: { step: string; fail?: boolean }) => {
        calls.push(input.step);
        if (input.fail && failing) throw new Error(`${input.step} <broke>`);
        return { step: input.step };
      },
    } as unknown as ActionDefinition;
    const step = (name: string, fail?: boolean) => ({
      name,
      type: 'l2' as const,
      l2_data: { provider: 'acme', module: 'test', action: 'flaky', input_data: { step: name, fail } },
    });
    const engine = new Engine({ actions: [flaky] });
    try {
      await engine.workflows.create({
        name: 'pay',
        steps: [step('charge'), step('notify', true)],
        wires: [],
      });
      failing = true;
      const failed = await engine.run('pay', {});
      expect(failed.status).toBe('failed');
      failing = false;
      for (let i = 0; i < 5; i++) expect((await engine.run('pay', {})).status).toBe('succeeded');
      failing = true;
      const handler = createHandler(engine);
      const get = async (path: string) =>
        (await handler(new Request(`${ORIGIN}${path}`, { headers: HTML }))).text();
      const list = await get('/console/runs?status=failed');
      expect(list.match(/<tr><td><a href="\/console\/runs\//g)).toHaveLength(1);
      expect(list).toContain(`/console/runs/${failed.id}`);
      expect(list).toContain('notify &lt;broke&gt;');
      const page = await get(`/console/runs/${failed.id}`);
      expect(page).toContain('role="alert"');
      expect(page).toContain('<option value="notify" selected>notify</option>');
      failing = false;
      calls.length = 0;
      const answer = await handler(
        new Request(`${ORIGIN}/console/runs/${failed.id}/retry`, {
          method: 'POST',
          headers: FORM,
          body: new URLSearchParams({ from_step: 'notify', input: '' }).toString(),
        }),
      );
      expect(answer.status).toBe(303);
      const id = decodeURIComponent(/\/console\/runs\/(.+)$/.exec(answer.headers.get('location')!)![1]!);
      const retried = await settled(engine, id);
      expect(retried).toMatchObject({ status: 'succeeded', retry_of: failed.id });
      // The step before the failed one kept its output: only the failed step ran again.
      expect(calls).toEqual(['notify']);
      const workflows = await get('/console/workflows');
      // 7 runs, 6 succeeded: 85.7%.
      expect(workflows).toContain('<td>85.7%</td>');
    } finally {
      await engine.close();
    }
  });
});
