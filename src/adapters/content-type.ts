/** MIME types of the file types `upload_file` names. */
const CONTENT_TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  csv: 'text/csv',
  txt: 'text/plain',
  json: 'application/json',
  html: 'text/html',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
};

/**
 * The MIME type for a `file_type` such as `pdf` (a value with a `/` is taken as a MIME type already),
 * else for the file name's extension; `application/octet-stream` when unknown. @internal
 */
export function contentTypeOf(fileType: string | undefined, fileName: string): string {
  const type = (fileType ?? fileName.split('.').pop() ?? '').toLowerCase();
  if (type.includes('/')) return type;
  return CONTENT_TYPES[type] ?? 'application/octet-stream';
}
