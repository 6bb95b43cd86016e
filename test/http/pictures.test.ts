import { parseDocument } from 'htmlparser2';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { Engine, type WorkflowInputBody } from '../../src/index.js';
import { createHandler } from '../../src/http/index.js';
import { byClass, fullText, parseXml } from '../pictures/xml.js';
import { call } from './helpers.js';

const HOSTILE = '<img src=x onerror=alert(1)>';

/** `first` succeeds, `<img …>` (a name with markup) waits for `release` and then fails. */
function pictureWorkflow(): WorkflowInputBody {
  const step = (name: string, action: string, input_data: Record<string, unknown>) => ({
    name,
    type: 'l2' as const,
    l2_data: { provider: 'test', module: 'pictures', action, input_data },
  });
  return {
    name: 'pictures',
    steps: [
      step('first', 'echo', { n: '{{input.n}}' }),
      step(HOSTILE, 'wait_then_fail', { n: '{{first.n}}' }),
    ],
    wires: [],
    workflow_input: {
      name: 'input',
      input_schema: { type: 'object', properties: { n: { type: 'number' } } },
    },
  };
}

async function pictureEngine() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const engine = new Engine({
    actions: [
      {
        provider: 'test',
        module: 'pictures',
        action: 'echo',
        input: z.looseObject({}),
        run: (input) => input,
      },
      {
        provider: 'test',
        module: 'pictures',
        action: 'wait_then_fail',
        input: z.looseObject({}),
        run: async () => {
          await released;
          throw new Error('the printer is on <fire>');
        },
      },
    ],
  });
  await engine.workflows.create(pictureWorkflow());
  return { engine, handler: createHandler(engine, { basePath: '/api' }), release };
}

function expectPictureHeaders(response: Response) {
  expect(response.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
  expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  expect(response.headers.get('content-security-policy')).toBe(
    "default-src 'none'; style-src 'unsafe-inline'",
  );
}

describe('pictures over HTTP', () => {
  it('GET /workflows/{name}/graph.svg draws the stored workflow; an unknown one is a 404 problem', async () => {
    const { handler } = await pictureEngine();
    const answer = await call(handler, 'GET', '/api/workflows/pictures/graph.svg');
    expect(answer.status).toBe(200);
    expectPictureHeaders(answer.response);
    const svg = parseXml(answer.text);
    expect(byClass(svg, 'text', 'name').map(fullText)).toEqual(['input', 'first', HOSTILE]);
    expect(byClass(svg, 'path', 'edge')).toHaveLength(2);

    const missing = await call(handler, 'GET', '/api/workflows/nope/graph.svg');
    expect(missing.status).toBe(404);
    expect(missing.response.headers.get('content-type')).toBe('application/problem+json');
  });

  it('GET /runs/{id}/timeline.svg and /runs/{id}/page show a run as it goes on, then its failure', async () => {
    const { engine, handler, release } = await pictureEngine();
    const handle = await engine.start('pictures', { n: 1 });
    // Wait (10 s at most) until the run record shows the second step running.
    for (let i = 0; i < 1000; i++) {
      const record = await engine.getRun(handle.id).catch(() => undefined);
      if (record?.steps.some((s) => s.status === 'running')) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const going = await call(handler, 'GET', `/api/runs/${handle.id}/timeline.svg`);
    expectPictureHeaders(going.response);
    expect(byClass(parseXml(going.text), 'g', 'step').map((g) => g.attributes['data-status'])).toEqual([
      'succeeded',
      'running',
    ]);
    const goingPage = await call(handler, 'GET', `/api/runs/${handle.id}/page`);
    expect(goingPage.status).toBe(200);
    expect(goingPage.text).toContain('<meta http-equiv="refresh" content="2">');

    release();
    expect((await handle.result).status).toBe('failed');
    const done = parseXml((await call(handler, 'GET', `/api/runs/${handle.id}/timeline.svg`)).text);
    expect(byClass(done, 'g', 'step').map((g) => g.attributes['data-status'])).toEqual([
      'succeeded',
      'failed',
    ]);
    expect(byClass(done, 'text', 'step-error').map(fullText)).toEqual([
      `step "${HOSTILE}" failed: the printer is on <fire>`,
    ]);

    const page = await call(handler, 'GET', `/api/runs/${handle.id}/page`);
    expect(page.status).toBe(200);
    expect(page.response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.response.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.text).not.toContain('http-equiv="refresh"');
    const document = parseDocument(page.text);
    const elements = (name: string) => findElements(document, name);
    // Both pictures inline, the markup in names and errors only ever as text, and no script.
    expect(elements('svg').map((e) => e.attribs['class'])).toEqual(['stepwire-timeline', 'stepwire-graph']);
    expect(elements('img')).toEqual([]);
    expect(elements('script')).toEqual([]);
    expect(elements('fire')).toEqual([]);
    const links = elements('a').map((a) => a.attribs['href']);
    expect(links).toEqual([
      `/api/runs/${handle.id}/timeline.svg`,
      `/api/runs/${handle.id}`,
      '/api/workflows/pictures/graph.svg',
    ]);
    // The graph shows how far each step got in this run.
    const graph = elements('svg').find((e) => e.attribs['class'] === 'stepwire-graph')!;
    const graphSteps = findElements(graph, 'g').filter((g) => g.attribs['class'] === 'step');
    expect(graphSteps.map((g) => g.attribs['data-status'])).toEqual(['succeeded', 'failed']);
    const cells = elements('td').map((td) => textOf(td));
    expect(cells).toContain(HOSTILE);
    expect(cells).toContain(`step "${HOSTILE}" failed: the printer is on <fire>`);
  });

  it('the page of an unknown run is a 404 page; a run whose workflow is gone still shows its timeline', async () => {
    const { engine, handler, release } = await pictureEngine();
    release();
    const missing = await call(handler, 'GET', '/api/runs/nope/page');
    expect(missing.status).toBe(404);
    expect(missing.response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(missing.text).toContain('<h1>Not found</h1>');

    const record = await engine.run('pictures', { n: 2 });
    await engine.workflows.delete('pictures');
    const page = await call(handler, 'GET', `/api/runs/${record.id}/page`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('The workflow "pictures" no longer exists.');
    expect(page.text).toContain('class="stepwire-timeline"');
  });
});

type Node = ReturnType<typeof parseDocument>;
type Element = Node['children'][number] & {
  name: string;
  attribs: Record<string, string>;
  children: unknown[];
};

function findElements(node: { children?: unknown[] }, name: string): Element[] {
  const found: Element[] = [];
  for (const child of (node.children ?? []) as Element[]) {
    if (child.type === 'tag' && child.name === name) found.push(child);
    found.push(...findElements(child as { children?: unknown[] }, name));
  }
  return found;
}

function textOf(node: unknown): string {
  const n = node as { type: string; data?: string; children?: unknown[] };
  if (n.type === 'text') return n.data ?? '';
  return (n.children ?? []).map(textOf).join('');
}
