import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors/index.js';
import { performRequest, type RequestData } from '../../src/request/index.js';
import { options } from './helpers.js';

function fakeFetch(): { fetch: typeof fetch; requests: Request[] } {
  const requests: Request[] = [];
  const fn = (async (input: RequestInfo | URL) => {
    requests.push(input as Request);
    return new Response('ok', { status: 200, headers: { 'content-type': 'text/plain' } });
  }) as typeof fetch;
  return { fetch: fn, requests };
}

async function issuesOf(data: unknown): Promise<{ path: string; code: string; message: string }[]> {
  const { fetch, requests } = fakeFetch();
  const error = await performRequest(data as RequestData, options({ fetch })).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ValidationError);
  expect(requests).toHaveLength(0);
  return (error as ValidationError).issues;
}

describe('request_data', () => {
  it('names a placeholder that has no value', async () => {
    const issues = await issuesOf({
      url: 'https://api.example.com/users/{user}/posts/:post',
      path_params: { user: 1 },
    });
    expect(issues).toEqual([
      {
        code: 'missing_path_param',
        path: 'request_data.path_params.post',
        message: 'the url has placeholder :post but path_params gives no value for "post"',
      },
    ]);
  });

  it('refuses path params that would climb out of the path', async () => {
    const issues = await issuesOf({
      url: 'https://api.example.com/files/{name}',
      path_params: { name: '..' },
    });
    expect(issues[0]?.code).toBe('invalid_path_param');
  });

  it('leaves colons inside a segment alone (items:batchGet)', async () => {
    const { fetch, requests } = fakeFetch();
    await performRequest({ url: 'https://api.example.com/v1/items:batchGet' }, options({ fetch }));
    expect(requests[0]?.url).toBe('https://api.example.com/v1/items:batchGet');
  });

  it('refuses headers of the connection and says what is wrong with a header, before sending anything', async () => {
    const issues = await issuesOf({
      url: 'https://api.example.com/upload',
      method: 'PUT',
      body: 'abc',
      headers: {
        'Transfer-Encoding': 'chunked',
        'content-length': '3',
        Expect: '100-continue',
        Upgrade: 'h2c',
        'Keep-Alive': 'timeout=5',
        Connection: 'close',
        'x-wide': 'Ā',
        'x-split': 'a\r\nb',
        'bad name': 'x',
      },
    });
    const connection = (name: string) =>
      `header "${name}" belongs to the connection, which sets it; a step cannot`;
    expect(issues.map((issue) => [issue.code, issue.path, issue.message])).toEqual([
      ['invalid_header', 'request_data.headers.Transfer-Encoding', connection('Transfer-Encoding')],
      ['invalid_header', 'request_data.headers.content-length', connection('content-length')],
      ['invalid_header', 'request_data.headers.Expect', connection('Expect')],
      ['invalid_header', 'request_data.headers.Upgrade', connection('Upgrade')],
      ['invalid_header', 'request_data.headers.Keep-Alive', connection('Keep-Alive')],
      ['invalid_header', 'request_data.headers.Connection', connection('Connection')],
      [
        'invalid_header',
        'request_data.headers.x-wide',
        'the value of header "x-wide" holds a character a header cannot carry (beyond U+00FF)',
      ],
      [
        'invalid_header',
        'request_data.headers.x-split',
        'the value of header "x-split" holds a line break or NUL',
      ],
      ['invalid_header', 'request_data.headers.bad name', '"bad name" is not a valid header name'],
    ]);
  });

  it('lists every problem at once', async () => {
    const issues = await issuesOf({
      url: 'not a url',
      method: 'FETCH',
      headers: { 'x-ok': 'a', 'bad header': 'b', 'x-obj': { a: 1 } },
      query_params: { filter: { a: 1 } },
    });
    expect(issues.map((i) => i.path).sort()).toEqual(
      [
        'request_data.headers.bad header',
        'request_data.headers.x-obj',
        'request_data.method',
        'request_data.url',
      ].sort(),
    );
    expect(issues.find((i) => i.path === 'request_data.method')?.message).toContain(
      'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS',
    );
  });

  it('refuses a body on GET and a body that is not JSON', async () => {
    expect((await issuesOf({ url: 'https://api.example.com/', body: 'x' }))[0]?.code).toBe(
      'body_not_allowed',
    );
    // null is no body: a GET whose body is a reference to a skipped step's output still goes out.
    for (const method of ['GET', 'HEAD']) {
      const { fetch, requests } = fakeFetch();
      const data = { url: 'https://api.example.com/', method, body: null } as RequestData;
      expect((await performRequest(data, options({ fetch }))).status).toBe(200);
      expect([requests[0]?.method, requests[0]?.body]).toEqual([method, null]);
    }
    expect(
      (await issuesOf({ url: 'https://api.example.com/', method: 'POST', body: { n: 10n } }))[0]?.code,
    ).toBe('invalid_body');
  });

  it('reports a query param that is an object, with its index in an array', async () => {
    const issues = await issuesOf({ url: 'https://api.example.com/', query_params: { id: [1, { x: 1 }] } });
    expect(issues).toMatchObject([{ path: 'request_data.query_params.id[1]', code: 'invalid_type' }]);
  });

  it('defaults to GET, upper-cases the method and sends number headers as text', async () => {
    const { fetch, requests } = fakeFetch();
    await performRequest({ url: 'https://api.example.com/' }, options({ fetch }));
    await performRequest(
      { url: 'https://api.example.com/', method: 'delete', headers: { 'x-n': 5 as unknown as string } },
      options({ fetch }),
    );
    expect(requests.map((r) => r.method)).toEqual(['GET', 'DELETE']);
    expect(requests[1]?.headers.get('x-n')).toBe('5');
  });

  it('rejects request_data that is not an object', async () => {
    expect(await issuesOf(null)).toMatchObject([{ path: 'request_data', code: 'invalid_type' }]);
  });
});
