/**
 * Well-formed text: no half of a surrogate pair. Text that leaves the process as UTF-8 (Postgres, a
 * file name, a URL) cannot hold one: it becomes U+FFFD, or the encoding throws.
 * @module
 */

/** True when `text` holds half of a surrogate pair (a lone surrogate). @internal */
export function holdsLoneSurrogate(text: string): boolean {
  return /[\uD800-\uDFFF]/u.test(text);
}

/** What a message says of text holding a lone surrogate. @internal */
export const LONE_SURROGATE = 'must be well-formed text (it holds half of a surrogate pair)';
