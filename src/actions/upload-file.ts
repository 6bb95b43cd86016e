import { LimitError, NonRetryableError } from '../errors/index.js';
import { UploadFileInputSchema } from '../schema/index.js';
import type { FileStore } from '../adapters/types.js';
import { contentTypeOf } from '../adapters/content-type.js';
import { decodeBase64 } from '../pdf/base64.js';
import type { ActionDefinition } from './registry.js';

/** `<provider>/files/upload_file` for the file store registered under `provider`. @internal */
export function uploadFileAction(
  provider: string,
  store: FileStore,
): ActionDefinition<typeof UploadFileInputSchema> {
  return {
    provider,
    module: 'files',
    action: 'upload_file',
    description: `Stores a file in the "${provider}" file store.`,
    input: UploadFileInputSchema,
    run: async (input, context) => {
      let data: Uint8Array;
      if (typeof input.file_data === 'string') {
        try {
          data = decodeBase64(input.file_data);
        } catch (error) {
          throw new NonRetryableError('file_data is not valid base64', { cause: error });
        }
      } else data = input.file_data;
      const max = context.limits['uploadMaxBytes'] ?? 10 * 1024 * 1024;
      if (data.byteLength > max)
        throw new LimitError(
          'uploadMaxBytes',
          `the file is ${data.byteLength} bytes, over the limit of ${max} bytes (limits.uploadMaxBytes)`,
        );
      const file = {
        name: input.file_name,
        contentType: contentTypeOf(input.file_type, input.file_name),
        data,
      };
      const stored = await store.put(input.folder_id ? { ...file, folder: input.folder_id } : file, {
        signal: context.signal,
        idempotencyKey: context.idempotencyKey,
      });
      return { file_url: stored.url };
    },
  };
}
