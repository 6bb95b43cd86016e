import { describe, expect, it } from 'vitest';
import { RequestRefusedError, UpstreamError } from '../../src/errors/index.js';
import {
  checkDestination,
  isAllowedDestination,
  performRequest,
  type Resolver,
} from '../../src/request/index.js';
import { options } from './helpers.js';

/** A fetch that never touches the network: records the URL and answers 200 JSON. */
function fakeFetch(): { fetch: typeof fetch; urls: string[] } {
  const urls: string[] = [];
  const fn = (async (input: RequestInfo | URL) => {
    urls.push(input instanceof Request ? input.url : String(input));
    return new Response('{"fake":true}', { status: 200, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  return { fetch: fn, urls };
}

/** A resolver from a fixed table; records every name it is asked for. */
function fakeResolve(table: Record<string, string[]>): { resolve: Resolver; asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    resolve: async (host) => {
      asked.push(host);
      const found = table[host];
      if (!found) throw new Error(`ENOTFOUND ${host}`);
      return found;
    },
  };
}

const TABLE = {
  'api.example.com': ['93.184.216.34'],
  'sneaky.example.com': ['93.184.216.34', '10.0.0.5'],
  'inside.example.com': ['10.0.0.5'],
  'v6.example.com': ['2606:2800:220:1:248:1893:25c8:1946'],
  'mapped.example.com': ['::ffff:169.254.169.254'],
};

describe('refused before any connection', () => {
  it.each([
    ['http://127.0.0.1:8080/', 'loopback'],
    ['http://localhost/', 'local'],
    ['http://LOCALHOST./', 'local'],
    ['http://app.localhost:3000/', 'local'],
    ['http://metadata.google.internal/computeMetadata/v1/', 'local'],
    ['http://10.1.2.3/', 'private'],
    ['http://172.16.0.1/', 'private'],
    ['http://172.31.255.255/', 'private'],
    ['http://192.168.1.1/', 'private'],
    ['http://169.254.169.254/latest/meta-data/', 'link-local'],
    ['http://100.64.0.1/', 'carrier-grade NAT'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://[::]/', 'unspecified'],
    ['http://[::1]:9000/', 'loopback'],
    ['http://[fe80::1]/', 'link-local'],
    ['http://[fd00::1]/', 'private'],
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['http://[::ffff:10.0.0.1]/', 'private'],
    ['http://[::ffff:a9fe:a9fe]/', 'link-local'],
    ['http://2130706433/', 'loopback'],
    ['http://0x7f.1/', 'loopback'],
    ['http://0x7f000001/', 'loopback'],
    ['http://0177.0.0.1/', 'loopback'],
    ['http://127.1/', 'loopback'],
    ['http://127.0.0.1./', 'loopback'],
    ['http://%31%32%37.0.0.1/', 'loopback'],
    ['http://0xa9.0xfe.0xa9.0xfe/', 'link-local'],
    ['http://224.0.0.1/', 'multicast'],
    ['http://255.255.255.255/', 'broadcast'],
    ['http://inside.example.com/', '10.0.0.5'],
    ['http://sneaky.example.com/', '10.0.0.5'],
    ['http://mapped.example.com/', '::ffff:169.254.169.254'],
  ])('%s (%s)', async (url, reason) => {
    const { fetch, urls } = fakeFetch();
    const { resolve } = fakeResolve(TABLE);
    const error = await performRequest({ url }, options({ fetch, resolve })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestRefusedError);
    expect((error as Error).message).toContain(reason);
    expect((error as Error).message).toContain('security.allowHosts');
    expect(urls).toEqual([]);
  });

  it.each(['ftp://example.com/x', 'file:///etc/passwd', 'data:text/plain,hi', 'javascript:alert(1)'])(
    'refuses the scheme of %s',
    async (url) => {
      const { fetch, urls } = fakeFetch();
      const error = await performRequest({ url }, options({ fetch })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RequestRefusedError);
      expect((error as Error).message).toContain('only http: and https:');
      expect(urls).toEqual([]);
    },
  );

  it('refuses URLs that carry credentials', async () => {
    const { fetch, urls } = fakeFetch();
    const error = await performRequest({ url: 'https://user:pw@api.example.com/' }, options({ fetch })).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RequestRefusedError);
    expect(urls).toEqual([]);
  });

  it('names the host, the reason and the entry that would allow it', async () => {
    const { fetch } = fakeFetch();
    const error = await performRequest({ url: 'http://10.0.0.1:8080/x' }, options({ fetch })).catch(
      (e: unknown) => e,
    );
    expect((error as Error).message).toBe(
      'Request to http://10.0.0.1:8080/ refused before connecting: 10.0.0.1 is a private-network address. ' +
        'To allow it, add "10.0.0.1" or "10.0.0.1:8080" to security.allowHosts.',
    );
  });
});

describe('allowed', () => {
  it('passes a name that resolves to a public address to the fetch', async () => {
    const { fetch, urls } = fakeFetch();
    const { resolve, asked } = fakeResolve(TABLE);
    const out = await performRequest(
      { url: 'https://api.example.com/v1/items' },
      options({ fetch, resolve }),
    );
    expect(out).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: { fake: true },
    });
    expect(urls).toEqual(['https://api.example.com/v1/items']);
    expect(asked).toEqual(['api.example.com']);
  });

  it('passes public IP literals without resolving', async () => {
    const { fetch, urls } = fakeFetch();
    const { resolve, asked } = fakeResolve({});
    await performRequest({ url: 'http://93.184.216.34/' }, options({ fetch, resolve }));
    await performRequest({ url: 'http://[2606:4700::1111]/' }, options({ fetch, resolve }));
    expect(urls).toHaveLength(2);
    expect(asked).toEqual([]);
  });

  it('without a resolver, passes dotted public names but refuses single-label names', async () => {
    const { fetch, urls } = fakeFetch();
    await performRequest({ url: 'https://api.example.com/' }, options({ fetch }));
    const error = await performRequest({ url: 'http://intranet/' }, options({ fetch })).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RequestRefusedError);
    expect(urls).toEqual(['https://api.example.com/']);
  });

  it.each([
    [['127.0.0.1:8080'], 'http://127.0.0.1:8080/', true],
    [['127.0.0.1:8080'], 'http://127.0.0.1:8081/', false],
    [['127.0.0.1'], 'http://127.0.0.1:9999/', true],
    [['127.0.0.1'], 'http://2130706433:9999/', true],
    [['0x7f.1:80'], 'http://127.0.0.1/', true],
    [['[::1]:9000'], 'http://[::1]:9000/', true],
    [['::1'], 'http://[::1]:1234/', true],
    [['[::1]:9000'], 'http://[::1]:9001/', false],
    [['LOCALHOST'], 'http://localhost:3000/', true],
    [['api.internal'], 'https://api.internal/', true],
    [['api.internal:443'], 'https://api.internal/', true],
    [['api.internal:443'], 'http://api.internal/', false],
    [['internal'], 'https://api.internal/', false],
    [['10.0.0.1'], 'http://10.0.0.2/', false],
  ])('allowHosts %j and %s -> %s', async (allowHosts, url, expected) => {
    expect(await isAllowedDestination(new URL(url), allowHosts)).toBe(expected);
  });

  it('an allowed name is not resolved at all', async () => {
    const { resolve, asked } = fakeResolve(TABLE);
    await checkDestination(new URL('http://inside.example.com/'), ['inside.example.com'], resolve);
    expect(asked).toEqual([]);
  });

  it('rejects a malformed allowHosts entry with a TypeError naming it', async () => {
    await expect(checkDestination(new URL('http://a.com/'), ['ok.com', 'http://x/'])).rejects.toThrow(
      /security\.allowHosts\[1\]/,
    );
  });

  it('a name that does not resolve fails with an UpstreamError, and is not allowed', async () => {
    const { resolve } = fakeResolve({});
    await expect(checkDestination(new URL('http://nowhere.example/'), [], resolve)).rejects.toBeInstanceOf(
      UpstreamError,
    );
    expect(await isAllowedDestination(new URL('http://nowhere.example/'), [], resolve)).toBe(false);
  });
});
