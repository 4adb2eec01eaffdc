/**
 * multipart/form-data framing for bodies the core sends upstream (file uploads, audio): text fields in order, then
 * one file part, written as the file's bytes arrive. Translators name the fields; they never frame bytes.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';

/** A quoted multipart parameter: quotes and line breaks percent-encoded, as the WHATWG FormData encoder does. */
const quoted = (value: string) => `"${value.replace(/[\r\n"]/g, (c) => encodeURIComponent(c))}"`;
/** A media type the caller gave, reduced to the characters a header may carry. */
export const safeType = (type: string) => (/^[\w!#$&^.+-]+\/[\w!#$&^.+-]+$/.test(type) ? type : 'application/octet-stream');

export interface MultipartFile {
  field: string;
  filename: string;
  mimeType: string;
}

export async function* framed(boundary: string, fields: ReadonlyArray<readonly [string, string]>, file: MultipartFile, bytes: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  for (const [name, value] of fields) {
    yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name=${quoted(name)}\r\n\r\n${value}\r\n`);
  }
  yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name=${quoted(file.field)}; filename=${quoted(file.filename)}\r\nContent-Type: ${safeType(file.mimeType)}\r\n\r\n`);
  yield* bytes;
  yield Buffer.from(`\r\n--${boundary}--\r\n`);
}

export const newBoundary = () => `aigw-${randomBytes(16).toString('hex')}`;

/** A byte stream the upstream client reads at its own pace (its back-pressure reaches the source). */
export const pulled = (source: AsyncIterable<Buffer>) => Readable.from(source, { objectMode: false, highWaterMark: 64 * 1024 });

/**
 * A multipart/form-data body of text fields only (stability-ai's form requests): small, so built whole. The
 * translator puts `body` and `contentType` on its UpstreamRequest.
 */
export function formBody(fields: ReadonlyArray<readonly [string, string]>): { contentType: string; body: string } {
  const boundary = newBoundary();
  const parts = fields.map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(name)}\r\n\r\n${value}\r\n`);
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: `${parts.join('')}--${boundary}--\r\n` };
}
