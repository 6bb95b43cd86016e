/**
 * Reading a response: headers to a record, the body as a bounded stream, then JSON or text.
 * @module
 */
import { readLimited } from '../bytes/read-limited.js';
import { LimitError, UpstreamError } from '../errors/index.js';

/** Response headers as a record with lower-case names; repeated headers joined with `, `. @internal */
export function headersToRecord(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    const key = name.toLowerCase();
    out[key] = out[key] === undefined ? value : `${out[key]}, ${value}`;
  });
  return out;
}

/** True for `application/json` and any `+json` type. @internal */
export function isJsonContentType(contentType: string | null): boolean {
  if (!contentType) return false;
  const essence = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return essence === 'application/json' || essence === 'text/json' || essence.endsWith('+json');
}

function charsetOf(contentType: string | null): string {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '');
  return match?.[1]?.toLowerCase() ?? 'utf-8';
}

function tooLarge(what: string, max: number): LimitError {
  return new LimitError(
    'request.maxResponseBytes',
    `The response body of ${what} is larger than request.maxResponseBytes (${max} bytes); reading stopped there`,
  );
}

/**
 * Reads the body chunk by chunk and stops (cancelling the stream) as soon as it passes `max` bytes, so a
 * huge answer is never held in memory. `what` names the request in messages. @internal
 */
export async function readBodyBytes(
  response: Response,
  max: number,
  signal: AbortSignal,
  what: string,
): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length'));
  // With no content-encoding the declared length is the decoded length: refuse without reading.
  if (!response.headers.has('content-encoding') && Number.isFinite(declared) && declared > max) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge(what, max);
  }
  if (!response.body) return new Uint8Array(0);
  const bytes = await readLimited(response.body, max, signal);
  if (bytes === undefined) throw tooLarge(what, max);
  return bytes;
}

/**
 * Decodes a body: JSON content types are parsed (an empty body is `null`; invalid JSON fails with an
 * `UpstreamError` carrying the status), everything else is text in its declared charset. @internal
 */
export function decodeBody(
  bytes: Uint8Array,
  contentType: string | null,
  status: number,
  what: string,
): unknown {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charsetOf(contentType));
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  const text = decoder.decode(bytes);
  if (!isJsonContentType(contentType)) return text;
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const start = text.length > 80 ? `${text.slice(0, 80)}...` : text;
    throw new UpstreamError(
      `The response of ${what} (status ${status}) says it is JSON but is not: ${JSON.stringify(start)}`,
      status,
      {
        cause: error,
        retryable: false,
      },
    );
  }
}
