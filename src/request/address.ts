/**
 * Pure classification of IP addresses for the request-step address policy. No I/O, edge-safe.
 * @module
 */

/**
 * What kind of address an IP is. Only `public` addresses may be reached without an `allowHosts` entry.
 * - `loopback`: 127.0.0.0/8, ::1
 * - `private`: 10/8, 172.16/12, 192.168/16, fc00::/7, fec0::/10
 * - `link-local`: 169.254/16 (cloud metadata 169.254.169.254), fe80::/10
 * - `unspecified`: 0.0.0.0, ::
 * - `shared`: carrier-grade NAT 100.64/10
 * - `multicast`: 224/4, ff00::/8
 * - `broadcast`: 255.255.255.255
 * - `reserved`: documentation, benchmarking, protocol-assignment and future-use ranges, 0/8
 * - `invalid`: not an IP address at all
 */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unspecified'
  | 'shared'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'invalid';

/** An IPv4 range: first address as a 32-bit number, prefix length, and its class. */
type V4Range = readonly [base: number, prefix: number, kind: AddressClass];

const v4 = (a: number, b: number, c: number, d: number): number =>
  ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;

// Order matters only where ranges nest (0.0.0.0/32 before 0/8).
const V4_RANGES: readonly V4Range[] = [
  [v4(0, 0, 0, 0), 32, 'unspecified'],
  [v4(0, 0, 0, 0), 8, 'reserved'],
  [v4(10, 0, 0, 0), 8, 'private'],
  [v4(100, 64, 0, 0), 10, 'shared'],
  [v4(127, 0, 0, 0), 8, 'loopback'],
  [v4(169, 254, 0, 0), 16, 'link-local'],
  [v4(172, 16, 0, 0), 12, 'private'],
  [v4(192, 0, 0, 0), 24, 'reserved'],
  [v4(192, 0, 2, 0), 24, 'reserved'],
  [v4(192, 88, 99, 0), 24, 'reserved'],
  [v4(192, 168, 0, 0), 16, 'private'],
  [v4(198, 18, 0, 0), 15, 'reserved'],
  [v4(198, 51, 100, 0), 24, 'reserved'],
  [v4(203, 0, 113, 0), 24, 'reserved'],
  [v4(255, 255, 255, 255), 32, 'broadcast'],
  [v4(224, 0, 0, 0), 4, 'multicast'],
  [v4(240, 0, 0, 0), 4, 'reserved'],
];

/** Parses strict dotted-decimal IPv4 (`1.2.3.4`) to a 32-bit number, or `undefined`. @internal */
export function parseIPv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return undefined;
    const n = Number(part);
    if (n > 255) return undefined;
    value = value * 256 + n;
  }
  return value;
}

/**
 * Parses an IPv6 address (optionally in brackets, with a `%zone`, with a trailing dotted IPv4) to eight
 * 16-bit groups, or `undefined`. @internal
 */
export function parseIPv6(text: string): number[] | undefined {
  let s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = s.indexOf('%');
  if (zone !== -1) s = s.slice(0, zone);
  if (!s.includes(':')) return undefined;
  // A trailing dotted IPv4 becomes two groups.
  const lastColon = s.lastIndexOf(':');
  const tail = s.slice(lastColon + 1);
  if (tail.includes('.')) {
    const n = parseIPv4(tail);
    if (n === undefined) return undefined;
    s = `${s.slice(0, lastColon + 1)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const parseGroups = (part: string): number[] | undefined => {
    if (part === '') return [];
    const groups: number[] = [];
    for (const g of part.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
      groups.push(parseInt(g, 16));
    }
    return groups;
  };
  const head = parseGroups(halves[0] ?? '');
  const rest = halves.length === 2 ? parseGroups(halves[1] ?? '') : [];
  if (!head || !rest) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - rest.length;
  if (missing < 1) return undefined;
  return [...head, ...new Array<number>(missing).fill(0), ...rest];
}

function classifyV4(value: number): AddressClass {
  for (const [base, prefix, kind] of V4_RANGES) {
    const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
    if ((value & mask) >>> 0 === base) return kind;
  }
  return 'public';
}

function classifyV6(g: readonly number[]): AddressClass {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const embedded = ((g6 << 16) | g7) >>> 0;
  const upperZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (upperZero && g5 === 0 && g6 === 0) {
    if (g7 === 0) return 'unspecified';
    if (g7 === 1) return 'loopback';
  }
  // IPv4-mapped ::ffff:a.b.c.d and IPv4-translated ::ffff:0:a.b.c.d: the IPv4 address decides.
  if (upperZero && g5 === 0xffff) return classifyV4(embedded);
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0xffff && g5 === 0) return classifyV4(embedded);
  // NAT64 well-known prefix 64:ff9b::/96 reaches the embedded IPv4 address.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0)
    return classifyV4(embedded);
  // 6to4 2002:AABB:CCDD::/48 reaches the IPv4 address in groups 1 and 2.
  if (g0 === 0x2002) return classifyV4(((g1 << 16) | g2) >>> 0);
  if ((g0 & 0xfe00) === 0xfc00) return 'private';
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local';
  if ((g0 & 0xffc0) === 0xfec0) return 'private';
  if ((g0 & 0xff00) === 0xff00) return 'multicast';
  // Documentation 2001:db8::/32 and IETF protocol assignments 2001::/23 (Teredo, ORCHID...).
  if (g0 === 0x2001 && (g1 === 0x0db8 || g1 < 0x0200)) return 'reserved';
  // Global unicast is 2000::/3; everything else (::/8 compat, 64:ff9b:1::/48, 100::/64 ...) is not public.
  if ((g0 & 0xe000) === 0x2000) return 'public';
  return 'reserved';
}

/**
 * Classifies an IP address. Accepts dotted-decimal IPv4 and IPv6 in any standard spelling (with or
 * without brackets, `%zone`, embedded IPv4); IPv4-mapped, NAT64 and 6to4 addresses are classified by
 * the IPv4 address they reach. Anything else is `invalid`.
 * @example classifyAddress('169.254.169.254') // 'link-local'
 */
export function classifyAddress(ip: string): AddressClass {
  const n = parseIPv4(ip);
  if (n !== undefined) return classifyV4(n);
  const groups = parseIPv6(ip);
  if (groups) return classifyV6(groups);
  return 'invalid';
}

/** True when `host` (a URL hostname, brackets allowed) is an IP literal rather than a name. @internal */
export function isIpLiteral(host: string): boolean {
  return parseIPv4(host) !== undefined || parseIPv6(host) !== undefined;
}
