/**
 * The address policy of request steps: which destinations may be reached, decided before any
 * connection is made.
 * @module
 */
import { RequestRefusedError, UpstreamError } from '../errors/index.js';
import { classifyAddress, isIpLiteral, type AddressClass } from './address.js';
import type { Resolver } from './types.js';

/** One parsed `allowHosts` entry. @internal */
export interface AllowEntry {
  /** Normalized hostname as `URL.hostname` spells it (IPv6 in brackets), no trailing dot. */
  host: string;
  /** Port, or `undefined` when every port matches. */
  port?: string;
}

const ENTRY = /^(\[[^\]]*\]|[^:[\]/?#@]+)(?::(\d{1,5}))?$/;

/** Hostnames that name this machine or a local network whatever DNS says. */
const LOCAL_NAMES = new Set(['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback']);
/** Special-use suffixes that never name a public host (RFC 6761, RFC 6762, RFC 8375, ICANN `.internal`). */
const LOCAL_SUFFIXES = ['.localhost', '.local', '.internal', '.home.arpa', '.localdomain'];

function stripDot(host: string): string {
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

/**
 * Parses `allowHosts` entries; a malformed entry (or a port above 65535) throws a `TypeError` naming it.
 * IP spellings are normalized as in URLs, so `"0x7f.1"` is the same entry as `"127.0.0.1"`. @internal
 */
export function compileAllowHosts(entries: readonly string[]): AllowEntry[] {
  return entries.map((raw, i) => {
    let text = String(raw).trim().toLowerCase();
    // A bare IPv6 address ("::1") has no port: bracket it.
    if (!text.startsWith('[') && (text.match(/:/g)?.length ?? 0) > 1) text = `[${text}]`;
    const match = ENTRY.exec(text);
    let host: string | undefined;
    if (match?.[1]) {
      try {
        host = stripDot(new URL(`http://${match[1]}/`).hostname);
      } catch {
        host = undefined;
      }
    }
    const port = match?.[2] === undefined ? undefined : Number(match[2]);
    if (!match || !host || (port !== undefined && port > 65535)) {
      throw new TypeError(
        `security.allowHosts[${i}] ("${String(raw)}") is not a host name or IP with an optional port, e.g. "api.example.com" or "127.0.0.1:8080"`,
      );
    }
    return port === undefined ? { host } : { host, port: String(port) };
  });
}

/** The port a URL connects to, its scheme's default when none is written. @internal */
export function effectivePort(url: URL): string {
  if (url.port) return url.port;
  return url.protocol === 'https:' ? '443' : '80';
}

/** True when an entry names the URL's host (and port, if the entry has one). @internal */
export function matchesAllowList(url: URL, allow: readonly AllowEntry[]): boolean {
  const host = stripDot(url.hostname);
  const port = effectivePort(url);
  return allow.some((entry) => entry.host === host && (entry.port === undefined || entry.port === port));
}

const REASONS: Record<Exclude<AddressClass, 'public'>, string> = {
  loopback: 'a loopback address',
  private: 'a private-network address',
  'link-local': 'a link-local address (this includes cloud metadata services)',
  unspecified: 'the unspecified address',
  shared: 'a carrier-grade NAT address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
  invalid: 'not a valid address',
};

function refuse(url: URL, why: string): RequestRefusedError {
  const host = stripDot(url.hostname);
  return new RequestRefusedError(
    `Request to ${url.protocol}//${url.host}/ refused before connecting: ${why}. ` +
      `To allow it, add "${host}" or "${host}:${effectivePort(url)}" to security.allowHosts.`,
  );
}

/** Why a host name is refused by its spelling alone, or `undefined`. */
function nameReason(host: string, hasResolver: boolean): string | undefined {
  if (LOCAL_NAMES.has(host) || LOCAL_SUFFIXES.some((suffix) => host.endsWith(suffix))) {
    return `"${host}" names this machine or a local network`;
  }
  if (!hasResolver && !host.includes('.')) {
    return `"${host}" is a single-label name, which resolves inside the local network, and no resolver is configured to check it`;
  }
  return undefined;
}

/**
 * Checks that `url` may be reached, and throws a `RequestRefusedError` saying why not and how to allow
 * it. Allowed: `http:`/`https:` URLs whose host is named in `allow`, or whose address is public. IP
 * literals in every spelling are caught because `URL` normalizes them (`http://2130706433/`,
 * `0x7f.1`, `0177.0.0.1`, `127.1` all become `127.0.0.1`). A host name is refused when it is
 * localhost-like; with `resolve`, also when any of its addresses is not public.
 *
 * Time-of-check/time-of-use: `fetch` resolves the name again when it connects, so a DNS server that
 * answers differently the second time (DNS rebinding) can still reach a private address. The check
 * stops ordinary mistakes and plain SSRF; pin addresses in a custom `fetch` (e.g. an undici dispatcher
 * with a checking `lookup`) when that matters. Without `resolve` (edge runtimes) only the spelling is
 * checked. @internal
 */
export async function checkDestinationCompiled(
  url: URL,
  allow: readonly AllowEntry[],
  resolve?: Resolver,
): Promise<void> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RequestRefusedError(
      `Request to "${url.href}" refused: only http: and https: URLs may be requested`,
    );
  }
  if (url.username || url.password) {
    throw new RequestRefusedError(
      `Request to ${url.protocol}//${url.host}/ refused: the URL carries a user name or password; send credentials in an Authorization header instead`,
    );
  }
  if (matchesAllowList(url, allow)) return;
  const host = stripDot(url.hostname);
  if (isIpLiteral(host)) {
    const kind = classifyAddress(host);
    if (kind !== 'public') throw refuse(url, `${host} is ${REASONS[kind]}`);
    return;
  }
  const byName = nameReason(host, resolve !== undefined);
  if (byName) throw refuse(url, byName);
  if (!resolve) return;
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch (error) {
    throw new UpstreamError(`Could not resolve host "${host}": ${describe(error)}`, undefined, {
      cause: error,
    });
  }
  if (!Array.isArray(addresses) || addresses.length === 0) {
    throw new UpstreamError(`Could not resolve host "${host}": no addresses`);
  }
  for (const address of addresses) {
    const kind = classifyAddress(String(address));
    if (kind !== 'public')
      throw refuse(url, `"${host}" resolves to ${String(address)}, which is ${REASONS[kind]}`);
  }
}

/**
 * Checks that `url` may be reached under the address policy and throws a `RequestRefusedError` naming
 * the host, the reason and the `security.allowHosts` entry that would allow it.
 * @param allowHosts entries as in `security.allowHosts`
 * @param resolve resolves host names to addresses; without it names are checked by spelling only
 */
export async function checkDestination(
  url: URL,
  allowHosts: readonly string[],
  resolve?: Resolver,
): Promise<void> {
  await checkDestinationCompiled(url, compileAllowHosts(allowHosts), resolve);
}

/**
 * True when `url` may be reached under the address policy (see {@link checkDestination}); a name that
 * cannot be resolved is not allowed.
 */
export async function isAllowedDestination(
  url: URL,
  allowHosts: readonly string[],
  resolve?: Resolver,
): Promise<boolean> {
  try {
    await checkDestination(url, allowHosts, resolve);
    return true;
  } catch (error) {
    if (error instanceof RequestRefusedError || error instanceof UpstreamError) return false;
    throw error;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
