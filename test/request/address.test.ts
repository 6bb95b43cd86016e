import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyAddress } from '../../src/request/index.js';

describe('classifyAddress', () => {
  it.each([
    ['93.184.216.34', 'public'],
    ['8.8.8.8', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.15.255.255', 'public'],
    ['172.16.0.0', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.0', 'public'],
    ['192.168.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.255', 'shared'],
    ['100.128.0.0', 'public'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['224.0.0.251', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'private'],
    ['fdff:ffff::1', 'private'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['2002:0a00:0001::1', 'private'],
    ['2001:db8::1', 'reserved'],
    ['2606:4700:4700::1111', 'public'],
    ['::7f00:1', 'reserved'],
    ['localhost', 'invalid'],
    ['1.2.3', 'invalid'],
    ['256.1.1.1', 'invalid'],
    ['1::2::3', 'invalid'],
    ['', 'invalid'],
  ])('%s is %s', (ip, kind) => {
    expect(classifyAddress(ip)).toBe(kind);
  });

  const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255));
  const dotted = ([a, b, c, d]: [number, number, number, number]): string => `${a}.${b}.${c}.${d}`;
  const asNumber = ([a, b, c, d]: [number, number, number, number]): number =>
    ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;

  it('classifies every spelling the URL parser accepts like the dotted address', () => {
    fc.assert(
      fc.property(ipv4, (parts) => {
        const expected = classifyAddress(dotted(parts));
        const n = asNumber(parts);
        for (const spelling of [
          String(n),
          `0x${n.toString(16)}`,
          parts.map((p) => `0${p.toString(8)}`).join('.'),
          `${parts[0]}.${(n & 0xffffff) >>> 0}`,
        ]) {
          expect(classifyAddress(new URL(`http://${spelling}/`).hostname)).toBe(expected);
        }
      }),
    );
  });

  it('classifies an IPv4-mapped IPv6 address like its IPv4 address, as URL spells it', () => {
    fc.assert(
      fc.property(ipv4, (parts) => {
        const host = new URL(`http://[::ffff:${dotted(parts)}]/`).hostname;
        expect(classifyAddress(host)).toBe(classifyAddress(dotted(parts)));
      }),
    );
  });

  it('classifies every address of 10/8, 172.16/12 and 192.168/16 as private', () => {
    fc.assert(
      fc.property(fc.nat(0xffffff), fc.nat(0xfffff), fc.nat(0xffff), (a, b, c) => {
        const ip = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
        expect(classifyAddress(ip(((10 << 24) | a) >>> 0))).toBe('private');
        expect(classifyAddress(ip(((172 << 24) | (16 << 16) | b) >>> 0))).toBe('private');
        expect(classifyAddress(ip(((192 << 24) | (168 << 16) | c) >>> 0))).toBe('private');
      }),
    );
  });
});
