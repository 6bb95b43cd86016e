/**
 * Reads a byte stream up to a cap, chunk by chunk, so a huge body is never held in memory.
 * Shared by the HTTP handler (request bodies, form posts) and request steps (response bodies).
 * @internal
 * @module
 */

/**
 * The whole stream as one `Uint8Array`, or `undefined` as soon as it passes `maxBytes` (the stream
 * is then cancelled). Read errors propagate, after cancelling the stream. With a `signal`, a
 * pending read stops when it aborts, rejecting with the signal's reason.
 * @internal
 */
export async function readLimited(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<Uint8Array | undefined> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await (signal ? untilAborted(reader.read(), signal) : reader.read());
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => undefined);
        return undefined;
      }
      chunks.push(value);
    }
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    throw error;
  } finally {
    reader.releaseLock();
  }
  return concatBytes(chunks, size);
}

/** Joins chunks into one array (the chunk itself when there is only one). @internal */
export function concatBytes(chunks: readonly Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** Settles like `promise`, or rejects with the signal's reason when it aborts first. @internal */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
