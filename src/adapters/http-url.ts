/**
 * The check of an `http:` or `https:` address given as an option (a webhook, an API root), made
 * when the adapter or client is built: a typo fails there, naming the option, not at every call.
 * @module
 */

/**
 * Checks that `value` is an `http:` or `https:` URL and returns it normalized (`http://host:8080`
 * gets its `/`). With `plain`, a query or fragment is refused too (the URL is a root other paths go
 * under). A relative URL is read against `base` when one is given (a page's address in a browser).
 * @throws TypeError naming `option` (e.g. `WebhookChat: url`) and what is wrong.
 * @internal
 */
export function httpUrlOption(
  option: string,
  value: unknown,
  options: { plain?: boolean; base?: string | undefined } = {},
): string {
  const refuse = (why: string): TypeError =>
    new TypeError(
      `${option} must be an http or https URL such as "http://127.0.0.1:8080/", ${why} (got ${JSON.stringify(value)})`,
    );
  if (typeof value !== 'string' && !(value instanceof URL)) throw refuse('not a string');
  const text = String(value);
  let url: URL;
  try {
    url = new URL(text, options.base);
  } catch {
    throw refuse('not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse(`not ${url.protocol}`);
  if (options.plain && (url.search !== '' || url.hash !== '' || /[?#]/.test(text)))
    throw refuse('without a query or fragment');
  return url.href;
}
