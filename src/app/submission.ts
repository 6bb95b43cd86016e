/**
 * One-time submission tokens: every render of a form that runs a workflow or deletes a row carries a
 * fresh token, so a second click or a resent POST does the form's work once and gets the same answer.
 * @module
 */
import type { StorageAdapter } from '../adapters/types.js';
import { hexOf, sha256 } from '../bytes/hex.js';
import { sleep } from '../retry/index.js';
import { SUBMISSION_FIELD } from '../schema/application.js';
import type { WriteOutcome } from './write-job.js';

/** The form field that carries a form's one-time submission token. @internal */
export const SUBMISSION = SUBMISSION_FIELD;

/** What storage keeps per delete submission: taken at `at`, and once the row is gone, the output. */
interface StoredDelete {
  at: string;
  output?: Record<string, unknown>;
  written?: number;
}

/** Whether a submitted value looks like a token a form was given (a UUID). @internal */
export function isToken(value: unknown): value is string {
  return (
    typeof value === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)
  );
}

/**
 * The name of one submission: the hex SHA-256 of its parts (the form's app, screen and component,
 * the token), 64 characters whatever the names hold, so it always makes a valid run key. @internal
 */
export async function submissionDigest(parts: readonly string[]): Promise<string> {
  return hexOf(await sha256(JSON.stringify(parts)));
}

/**
 * Deletes once per submission: the first submission with a digest takes it in storage and writes; a
 * later one (a double click, a resent POST, in any engine on the same storage) waits for it and
 * answers the same output instead of a missing key. A refused delete is not kept, so sending it again
 * checks it again; a submission that has not finished within `timeoutMs` (its engine died) no longer
 * holds the others back, and they write themselves. @internal
 */
export async function deleteOnce(
  storage: StorageAdapter,
  digest: string,
  timeoutMs: number,
  write: () => Promise<WriteOutcome>,
): Promise<WriteOutcome> {
  for (let wait = 20; ; wait = Math.min(wait * 2, 1000)) {
    const taken: StoredDelete = { at: new Date().toISOString() };
    if (await storage.put('form_submissions', digest, taken, { ifAbsent: true })) {
      let outcome: WriteOutcome;
      try {
        outcome = await write();
      } catch (error) {
        await storage.delete('form_submissions', digest);
        throw error;
      }
      if (outcome.ok)
        await storage.put('form_submissions', digest, {
          ...taken,
          output: outcome.output,
          written: outcome.written,
        });
      else await storage.delete('form_submissions', digest);
      return outcome;
    }
    const earlier = await storage.get<StoredDelete>('form_submissions', digest);
    if (earlier?.output) return { ok: true, output: earlier.output, written: earlier.written ?? 0 };
    // Gone meanwhile (the first was refused): take it on the next turn. Taken too long ago: write.
    if (earlier && !(Date.now() - Date.parse(earlier.at) <= timeoutMs)) return write();
    if (earlier) await sleep(wait);
  }
}
