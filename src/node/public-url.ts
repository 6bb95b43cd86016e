/**
 * The public URL of a server: the address clients reach it at, which every link it hands out
 * starts with.
 * @module
 */

/**
 * What is wrong with `text` as a public URL (an http(s) address, optionally with a path, without
 * query, fragment or credentials, and not a wildcard listen address), or undefined when it is one.
 * @internal
 */
export function publicUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http:// or https:// address';
  if (url.search !== '' || url.hash !== '') return 'must have no query or fragment';
  if (url.username !== '' || url.password !== '') return 'must carry no credentials';
  if (url.hostname === '0.0.0.0' || url.hostname === '[::]')
    return 'names a listen address, not one clients use';
  return undefined;
}

/** `text` as a public URL base: its origin and path without a trailing slash. @internal */
export function publicUrlBase(text: string): string {
  const url = new URL(text);
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}
