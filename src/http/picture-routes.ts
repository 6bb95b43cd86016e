import { z } from 'zod';
import { renderMessagePage } from '../app/render.js';
import { NotFoundError } from '../errors/index.js';
import { runTimelineSvg, workflowGraphSvg } from '../pictures/index.js';
import type { Workflow } from '../schema/index.js';
import { defineRoute, nameParam } from './route.js';
import { renderRunPage } from './run-page.js';
import { html } from './screens.js';

const RUN_ID = z.object({ id: z.string().describe('Run id') });
const svg = (description: string) => ({ description, schema: z.string(), media: 'image/svg+xml' }) as const;
const page = (description: string) => ({ description, schema: z.string(), media: 'text/html' }) as const;

/** Headers of an SVG picture: nothing it could load or run, and never cached (runs move on). */
const SVG_HEADERS: Record<string, string> = {
  'content-type': 'image/svg+xml; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

/** Routes of the pictures of workflows and runs, and the page of a run. @internal */
export const PICTURE_ROUTES = [
  defineRoute({
    method: 'GET',
    path: '/workflows/{name}/graph.svg',
    name: 'workflows.graph',
    summary: 'The workflow as a picture',
    description:
      'An SVG of the steps in dependency order, with wires, references, conditions and for_each sources as arrows.',
    params: nameParam('Workflow'),
    responses: { 200: svg('The graph.') },
    problems: [404],
    action: async ({ engine, params }) =>
      new Response(workflowGraphSvg(await engine.workflows.get(params.name)), { headers: SVG_HEADERS }),
  }),
  defineRoute({
    method: 'GET',
    path: '/runs/{id}/timeline.svg',
    name: 'runs.timeline',
    summary: 'The run as a timeline',
    description:
      'An SVG with a bar per step on a time axis, coloured by status, with durations, attempts and errors. A run still going is drawn up to now.',
    params: RUN_ID,
    responses: { 200: svg('The timeline.') },
    problems: [404],
    action: async ({ engine, params }) =>
      new Response(runTimelineSvg(await engine.getRun(params.id), { now: Date.now() }), {
        headers: SVG_HEADERS,
      }),
  }),
  defineRoute({
    method: 'GET',
    path: '/runs/{id}/page',
    name: 'runs.page',
    summary: 'The page of a run',
    description:
      'An HTML page with the run’s timeline, its workflow’s graph and its record; it reloads itself while the run goes on.',
    params: RUN_ID,
    responses: { 200: page('The page.'), 404: page('No such run.') },
    problems: [],
    action: async ({ engine, params, options }) => {
      let record;
      try {
        record = await engine.getRun(params.id);
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error;
        return html(404, renderMessagePage('Not found', error.message));
      }
      const workflow = await engine.workflows.get(record.workflow).catch((error: unknown) => {
        if (error instanceof NotFoundError) return undefined;
        throw error;
      });
      return html(
        200,
        renderRunPage(record, {
          timeline: runTimelineSvg(record, { now: Date.now() }),
          graph: workflow && workflowGraphSvg(workflow as Workflow, { run: record }),
          basePath: options.basePath,
        }),
      );
    },
  }),
] as const;
