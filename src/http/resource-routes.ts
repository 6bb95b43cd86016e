import { z } from 'zod';
import { NotFoundError } from '../errors/index.js';
import { ApplicationSchema, type ApplicationBody } from '../schema/index.js';
import { LOCATION, defineRoute, json, nameParam, noContent } from './route.js';
import { handleGridExport, handleScreenRoute } from './screens.js';

const enc = encodeURIComponent;
const NAMES = z.array(z.string());
const SCRIPT_REF = z.object({ name: z.string() });
const SCREEN_PARAMS = nameParam('Application').extend({ url: z.string().describe('Screen url') });
const SCREEN_QUERY = z
  .record(z.string(), z.string())
  .describe('Passed to the screen as `query_params` (the first value of a repeated name).');
const html = (description: string) => ({ description, schema: z.string(), media: 'text/html' }) as const;

/** Routes of transform scripts, applications and their screens, and the OpenAPI document. @internal */
export const RESOURCE_ROUTES = [
  defineRoute({
    method: 'GET',
    path: '/scripts',
    name: 'scripts.list',
    summary: 'List script names',
    responses: { 200: { description: 'Every script name, ordered.', schema: NAMES } },
    problems: [],
    action: async ({ engine }) => json(200, await engine.scripts.list()),
  }),
  defineRoute({
    method: 'PUT',
    path: '/scripts/{name}',
    name: 'scripts.put',
    summary: 'Store a transform script',
    params: nameParam('Script'),
    body: { media: 'script', schema: z.string(), required: true, description: 'The JavaScript source.' },
    responses: {
      200: { description: 'Replaced.', schema: SCRIPT_REF },
      201: { description: 'Stored.', schema: SCRIPT_REF, headers: LOCATION },
    },
    problems: [400, 413, 415],
    action: async ({ engine, params: { name }, body, options }) => {
      // Created when no source was stored under the name (a trusted function registered under it is none).
      const { created } = await engine.scripts.put(name, await body());
      return json(
        created ? 201 : 200,
        { name },
        created ? { location: `${options.basePath}/scripts/${enc(name)}` } : {},
      );
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/scripts/{name}',
    name: 'scripts.get',
    summary: 'Read a transform script',
    params: nameParam('Script'),
    responses: { 200: { description: 'The source.', schema: z.string(), media: 'text/javascript' } },
    problems: [404],
    action: async ({ engine, params }) =>
      new Response(await engine.scripts.get(params.name), {
        status: 200,
        headers: { 'content-type': 'text/javascript; charset=utf-8' },
      }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/scripts/{name}',
    name: 'scripts.delete',
    summary: 'Delete a script',
    params: nameParam('Script'),
    responses: { 204: { description: 'Deleted.' } },
    problems: [404],
    action: async ({ engine, params }) => {
      if (!(await engine.scripts.delete(params.name))) throw new NotFoundError('script', params.name);
      return noContent();
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/applications',
    name: 'applications.list',
    summary: 'List application names',
    responses: { 200: { description: 'Every application name, ordered.', schema: NAMES } },
    problems: [],
    action: async ({ engine }) => json(200, await engine.applications.list()),
  }),
  defineRoute({
    method: 'PUT',
    path: '/applications/{name}',
    name: 'applications.put',
    summary: 'Store an application config',
    params: nameParam('Application'),
    body: {
      media: 'json',
      schema: ApplicationSchema,
      required: true,
      description: 'The application configuration: screens and their components.',
    },
    responses: {
      200: { description: 'Replaced.', schema: ApplicationSchema },
      201: { description: 'Stored.', schema: ApplicationSchema, headers: LOCATION },
    },
    problems: [400, 413, 415],
    action: async ({ engine, params: { name }, body, options }) => {
      const { application, created } = await engine.applications.put(name, (await body()) as ApplicationBody);
      return json(
        created ? 201 : 200,
        application,
        created ? { location: `${options.basePath}/applications/${enc(name)}` } : {},
      );
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/applications/{name}',
    name: 'applications.get',
    summary: 'Read an application config',
    params: nameParam('Application'),
    responses: { 200: { description: 'The config.', schema: ApplicationSchema } },
    problems: [404],
    action: async ({ engine, params }) => json(200, await engine.applications.get(params.name)),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/applications/{name}',
    name: 'applications.delete',
    summary: 'Delete an application',
    params: nameParam('Application'),
    responses: { 204: { description: 'Deleted.' } },
    problems: [404],
    action: async ({ engine, params }) => {
      if (!(await engine.applications.delete(params.name)))
        throw new NotFoundError('application', params.name);
      return noContent();
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/applications/{name}/screens/{url}',
    name: 'applications.renderScreen',
    summary: 'Render a screen as HTML',
    description:
      'The query string is passed to the screen (`{{query_params.x}}`, grid paging). Errors are HTML pages.',
    params: SCREEN_PARAMS,
    query: SCREEN_QUERY,
    responses: {
      200: html('The screen.'),
      404: html('No such application or screen.'),
      500: html('The screen could not be shown: a page with the reason.'),
    },
    problems: [],
    // The screen reads the query string itself: a record schema would drop a parameter named __proto__.
    action: ({ engine, request, params, options, identity }) =>
      handleScreenRoute(
        engine,
        request,
        { app: params.name, screen: params.url },
        { ...options, session: identity.session },
      ),
  }),
  defineRoute({
    method: 'POST',
    path: '/applications/{name}/screens/{url}/forms/{component}',
    name: 'applications.submitForm',
    summary: 'Submit a form',
    description:
      'Runs the form workflow (or writes the form row), then redirects (303); invalid input, a failed run or a redirect that cannot be built answers 422 with the screen re-rendered, the errors next to the form.',
    params: SCREEN_PARAMS.extend({ component: z.string().describe('Form component name') }),
    query: SCREEN_QUERY,
    body: {
      media: 'form',
      schema: z.record(z.string(), z.string()),
      required: true,
      description: 'The form fields.',
    },
    responses: {
      303: { description: 'Redirect to the next screen.', headers: { Location: 'The next screen.' } },
      400: html('The form body could not be read.'),
      403: html(
        'The browser says the form was sent from another site (Sec-Fetch-Site: cross-site): nothing ran.',
      ),
      404: html('No such application, screen or form.'),
      413: html('The form is larger than the limit.'),
      415: html('The form is not urlencoded or multipart.'),
      422: html(
        'The screen again, with the errors next to the form: invalid input, a failed run, or a redirect that could not be made.',
      ),
      500: html('The screen could not be shown: a page with the reason.'),
      503: html('The engine is closed (shutting down): nothing ran; send the form again.'),
    },
    problems: [],
    action: ({ engine, request, params, options, identity }) =>
      handleScreenRoute(
        engine,
        request,
        { app: params.name, screen: params.url, form: params.component },
        { ...options, session: identity.session },
      ),
  }),
  defineRoute({
    method: 'GET',
    path: '/applications/{name}/screens/{url}/grids/{grid}/export',
    name: 'applications.exportGrid',
    summary: 'Download a grid as CSV',
    description:
      "The view of a grid that has `export: true`, as the screen's query string makes it (search, sort, filters), every page, as CSV: the columns and rows the caller may read, under the grid's labels; values unformatted; a text cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`. Errors are HTML pages.",
    params: SCREEN_PARAMS.extend({ grid: z.string().describe('Grid component name') }),
    query: SCREEN_QUERY,
    responses: {
      200: {
        description: 'The CSV (UTF-8 with a byte order mark, CRLF lines, a header row), as an attachment.',
        schema: z.string(),
        media: 'text/csv',
        headers: { 'Content-Disposition': 'attachment; filename="<grid>.csv"' },
      },
      403: html('The caller may not use the application, or read its entity.'),
      404: html('No such application, screen or grid, or the grid has no export.'),
      422: html(
        'The view cannot be read for the values in the address, or has more rows than can be exported.',
      ),
      500: html('The grid could not be exported: a page with the reason.'),
    },
    problems: [],
    // The export reads the query string itself, as the screen does.
    action: ({ engine, host, request, params }) =>
      handleGridExport(engine, host.options.limits, request, {
        app: params.name,
        screen: params.url,
        grid: params.grid,
      }),
  }),
  defineRoute({
    method: 'GET',
    path: '/openapi.json',
    name: 'openapi',
    public: true,
    summary: 'This document',
    responses: {
      200: { description: 'The OpenAPI 3.1 document.', schema: z.record(z.string(), z.unknown()) },
    },
    problems: [],
    action: async ({ openapi }) => json(200, openapi()),
  }),
] as const;
