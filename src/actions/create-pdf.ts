import { CreatePdfInputSchema } from '../schema/index.js';
import { LimitError } from '../errors/index.js';
import { renderPdf } from '../pdf/index.js';
import { encodeBase64 } from '../pdf/base64.js';
import type { ActionDefinition } from './registry.js';

/** `platform/converters/create_pdf`: renders the HTML template with `[[.name]]` variables; output `pdf_data` (base64). */
export const createPdfAction: ActionDefinition<typeof CreatePdfInputSchema> = {
  provider: 'platform',
  module: 'converters',
  action: 'create_pdf',
  description: 'Renders an HTML template with [[.name]] variables into a PDF.',
  input: CreatePdfInputSchema,
  run: async (input, context) => {
    const timeoutMs = context.limits['pdfTimeoutMs'] ?? 30_000;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([context.signal, timeout]);
    try {
      const bytes = await renderPdf(input as Parameters<typeof renderPdf>[0], {
        signal,
        maxBytes: context.limits['pdfMaxBytes'] ?? 10 * 1024 * 1024,
        // An <img> naming a file of one of the engine's file stores (its file_url); never fetched.
        images: async (src) => {
          for (const store of Object.values(context.files)) {
            const found = store.get ? await store.get(src, { signal }) : undefined;
            if (found) return found.data;
          }
          return undefined;
        },
      });
      return { pdf_data: encodeBase64(bytes) };
    } catch (error) {
      if (timeout.aborted && !context.signal.aborted)
        throw new LimitError(
          'pdfTimeoutMs',
          `the PDF took longer than ${timeoutMs} ms to render (limits.pdfTimeoutMs)`,
          { cause: error },
        );
      throw error;
    }
  },
};
