/* global Request */
// Plays the edge scenario (test/edge/scenario.ts) in Bun or Deno against the built package, through
// `createHandler(engine)` and web-standard Requests, then prints the responses as one JSON line.
// Usage: <bun run | deno run --allow-read=<repo>> play.mjs <index.js URL> <http.js URL> <scenario JSON>
const [indexUrl, httpUrl, json] = globalThis.Deno ? globalThis.Deno.args : process.argv.slice(2);
const { Engine, MemorySpreadsheets, QuickJsSandbox } = await import(indexUrl);
const { createHandler } = await import(httpUrl);

const { sheets, requests } = JSON.parse(json);
const engine = new Engine({ spreadsheets: new MemorySpreadsheets(sheets), sandbox: new QuickJsSandbox() });
const handler = createHandler(engine);
const responses = [];
for (const { method, path, body, type } of requests) {
  const init = { method };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers = { 'content-type': type ?? 'application/json' };
  }
  const response = await handler(new Request(`http://localhost${path}`, init));
  const text = await response.text();
  const contentType = response.headers.get('content-type');
  responses.push({
    status: response.status,
    type: contentType,
    body: /json/.test(contentType ?? '') ? JSON.parse(text) : text,
  });
}
console.log(JSON.stringify(responses));
