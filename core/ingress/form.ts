/**
 * A small multipart/form-data body read whole (audio uploads of at most 10 MB): text fields and at most one file,
 * the byte limit enforced while reading (413 PAYLOAD_TOO_LARGE as soon as it is crossed, the connection closed
 * after the answer). Larger uploads stream instead (core/api/files-upload.ts).
 */
import { drainRefused } from './drain.ts';
import busboy from 'busboy';
import type { Context } from 'koa';
import { BodyLimit, tooLarge } from '../dispatch/passthrough.ts';
import { validationError } from '../errors.ts';

export interface FormFile {
  field: string;
  filename: string;
  mimeType: string;
  bytes: Buffer;
}

export interface Form {
  fields: Record<string, string>;
  file: FormFile | null;
}

const MAX_FIELDS = 32;
const FIELD_BYTES = 64 * 1024;

export function readForm(ctx: Context, limitBytes: number): Promise<Form> {
  if (Number(ctx.get('content-length')) > limitBytes) {
    drainRefused(ctx);
    return Promise.reject(tooLarge(limitBytes, ctx.path));
  }
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: ctx.req.headers, limits: { files: 1, fields: MAX_FIELDS, fieldSize: FIELD_BYTES, parts: MAX_FIELDS + 1 } });
  } catch (err) {
    return Promise.reject(validationError([{ path: '', message: `not a multipart/form-data body: ${(err as Error).message}` }]));
  }
  const limiter = new BodyLimit(limitBytes, ctx.path);
  return new Promise<Form>((resolve, reject) => {
    const form: Form = { fields: {}, file: null };
    let failed = false;
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      ctx.req.unpipe(limiter);
      limiter.unpipe(parser);
      drainRefused(ctx);
      reject(err);
    };
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) return fail(validationError([{ path: `/${name}`, message: `must be at most ${FIELD_BYTES} bytes` }]));
      form.fields[name] = value;
    });
    parser.on('file', (field, stream, info) => {
      const parts: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => parts.push(chunk));
      stream.on('end', () => {
        form.file = { field, filename: info.filename ?? 'audio', mimeType: info.mimeType || 'application/octet-stream', bytes: Buffer.concat(parts) };
      });
    });
    parser.on('filesLimit', () => fail(validationError([{ path: '', message: 'must carry one file' }])));
    parser.on('fieldsLimit', () => fail(validationError([{ path: '', message: `must carry at most ${MAX_FIELDS} fields` }])));
    parser.on('error', (err: Error) => fail(validationError([{ path: '', message: `malformed multipart body: ${err.message}` }])));
    parser.on('close', () => { if (!failed) resolve(form); });
    limiter.on('error', (err: Error) => fail(err));
    ctx.req.on('error', (err: Error) => fail(err));
    ctx.req.pipe(limiter).pipe(parser);
  });
}
