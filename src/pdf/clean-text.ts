/** Invisible or control characters removed from text before layout. */
// eslint-disable-next-line no-control-regex -- removing control characters is the point
const INVISIBLE = /[\u0000-\u0008\u000b\u000e-\u001f\u007f-\u009f\u00ad\u200b-\u200d\u2060\ufeff]/g;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * Prepares text for the embedded font: NFC (so `e` + combining accent becomes `é`), characters
 * outside the Basic Multilingual Plane (emoji) as `?`, invisible and control characters removed.
 * @internal
 */
export function cleanText(text: string): string {
  if (PRINTABLE_ASCII.test(text)) return text;
  return text
    .normalize('NFC')
    .replace(/[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]/g, '?')
    .replace(INVISIBLE, '');
}
