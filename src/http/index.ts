/**
 * `stepwire/http`: the HTTP API of an engine as a web-standard fetch handler ({@link createHandler}),
 * its OpenAPI 3.1 document ({@link buildOpenApi}) and a typed client on ky ({@link createClient}).
 * Edge-safe: no Node built-ins.
 *
 * How the API answers:
 * - Every operation is one entry of a route table that the handler, {@link buildOpenApi} and
 *   {@link createClient} all read, so the three always agree.
 * - Errors are `application/problem+json`: `{ type: "urn:stepwire:problem:<code>", status, title,
 *   detail, code, errors: [{ code, path, message }] }`; `errors` lists every problem (empty when the
 *   problem has no parts), up to 1,000, then one `more_problems` issue saying how many more. Statuses come from the error-code table `ERROR_CODES` of the main entry:
 *   `validation_failed` and `write_rejected` 400, `not_found` 404, `conflict` and `write_conflict` 409, `limit_exceeded`
 *   413 for a limit on what the caller sent (`http.*`) else 422, `cancelled` 503, `upstream_error`
 *   502; anything else is 500 with a generic detail (never the message or stack; `onError` receives
 *   the error for logging).
 * - Unknown path 404 (`route_not_found`); known path with another method 405 with `Allow`; a JSON route
 *   given another Content-Type (or a body without one) 415 with `Accept`; a body over `maxBodyBytes`
 *   (counted while it streams in, after gzip/deflate decoding) 413; nesting deeper than `maxJsonDepth`
 *   400 `too_deep`; malformed JSON 400 `invalid_json` naming line and column; an empty body where one is
 *   needed 400 `missing_body`.
 * - `POST /catalog/entities/{name}/read`: 404 when the entity does not exist; 400 when the body does
 *   not match `{operation?, page_size?, page_number?}` (strict, every problem listed); otherwise the
 *   read ran and the answer is 200 with the get_entity output exactly as the spec shapes it, including
 *   data errors (`body.error.is_error: true`, e.g. an unknown column or a cell that cannot be read),
 *   because the spec says the read reports its errors in its output. An empty body reads page 1.
 * - Creating answers 201 with the stored definition and a `Location` header; replacing answers 200.
 *   `POST /catalog/entities/spreadsheet/register` answers 201 or 200 with the entity.
 * - `PUT /workflows/{name}`: a body `name` different from the path is a 400 `name_mismatch`; a body
 *   without `name` takes the path's.
 * - An optional JSON body that is empty means `{}`. `POST /workflows/{name}/runs` answers 200 with
 *   the run record whatever its status, plus `Location: /runs/{id}`; with `Prefer: respond-async`,
 *   202 `{ run_id }` at once. A client that goes away never cancels the run (the answer stops
 *   waiting); `POST /runs/{id}/cancel` does.
 * - `PUT /scripts/{name}` takes `text/plain` or `application/javascript` (or `text/javascript`) and
 *   answers `{ name }` with 201 (new) or 200 (replaced); `GET /scripts/{name}` answers the source as
 *   `text/javascript`. Lists (`GET /catalog/entities`, `/workflows`) are JSON arrays of definitions;
 *   `GET /scripts` and `GET /applications` are JSON arrays of names. DELETE answers 204, or 404.
 * - `authorize(request, route)` runs after routing (unknown paths and wrong methods are answered
 *   first) and before the body is read: `false` answers 403 problem+json, a `Response` is sent as is.
 * - Path parameters are URL-decoded segment by segment, so names may hold spaces or `/` (as `%2F`).
 * @module
 */
export { createHandler, type FetchHandler } from './handler.js';
export {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_JSON_DEPTH,
  type HandlerOptions,
  type AuthorizeHook,
  type RouteInfo,
} from './options.js';
export type { ProblemDetails } from './problem.js';
export { buildOpenApi, type OpenApiOptions } from './openapi.js';
export { createClient, type ClientOptions, type RunWorkflowOptions, type StepwireClient } from './client.js';
export { HttpProblemError } from './client-error.js';
