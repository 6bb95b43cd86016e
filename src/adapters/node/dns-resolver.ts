import { lookup } from 'node:dns/promises';

/**
 * Resolves a host name to every address, with Node's resolver. Pass it as
 * `new Engine({ security: { resolve: nodeResolver } })` so request steps refuse names that point
 * at loopback, private or link-local addresses.
 */
export async function nodeResolver(hostname: string): Promise<string[]> {
  const addresses = await lookup(hostname, { all: true, verbatim: true });
  return addresses.map((entry) => entry.address);
}
