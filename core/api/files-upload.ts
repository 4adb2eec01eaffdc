/**
 * Reading POST /v1/files. Multipart: the form is parsed as it arrives (busboy) and the file part streams to the
 * provider while it is read, with the provider's pace reaching the caller's socket; nothing holds the file. Because
 * the bytes go upstream as they come, the provider must be known when the file part starts: `provider` and
 * `purpose` come before `file` (the official openai client streams the form's parts in the order of the object's
 * keys: `files.create({ provider, purpose, file })`). `expires_in_seconds` and `metadata` only concern the registry and may
 * come before or after. JSON: the whole body within 50 MiB, with the file as `content_base64`.
 */
import { drainRefused } from '../ingress/drain.ts';
import busboy from 'busboy';
import { Readable } from 'node:stream';
import { BodyLimit, tooLarge } from '../dispatch/passthrough.ts';
import type { UploadSource, Uploaded } from '../dispatch/files-call.ts';
import { GatewayError, validationError } from '../errors.ts';
import { jsonBodyReader } from '../ingress/body.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import { uploadFields, type UploadFields } from './files-fields.ts';

export const FILES_ROUTE = '/v1/files';
/** The spec's limits: 512 MiB for a multipart upload's file, 50 MiB for a JSON body. */
export const MULTIPART_FILE_LIMIT = 512 * 1024 * 1024;
export const JSON_UPLOAD_LIMIT = 50 * 1024 * 1024;
/** Room for the form's other parts and its framing, beside the file. */
const FORM_ALLOWANCE = 1024 * 1024;
const FIELD_LIMIT = 64 * 1024;

export interface FileDescription {
  filename: string;
  mimeType: string;
  /** Known for JSON uploads. */
  bytes?: number;
}

/** Starts the provider upload once the fields that pick the provider are known; throws for a refused upload. */
export type BeginUpload = (fields: UploadFields, file: FileDescription, source: UploadSource, signal: AbortSignal) => Promise<Uploaded>;

export interface ReceivedUpload {
  fields: UploadFields;
  file: FileDescription;
  uploaded: Uploaded;
}

const abortError = () => new DOMException('The client went away', 'AbortError');

const readJsonUpload = jsonBodyReader(JSON_UPLOAD_LIMIT);

export async function receiveJson(ctx: GatewayContext, begin: BeginUpload): Promise<ReceivedUpload> {
  const body = await readJsonUpload(ctx);
  const record = (body && typeof body === 'object' && !Array.isArray(body) ? body : null) as Record<string, unknown> | null;
  if (!record) throw validationError([{ path: '', message: 'must be an object' }]);
  const fields = uploadFields(record, 'json');
  const content = record.content_base64;
  const issues = [];
  if (typeof content !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(content) || content.length % 4 === 1) issues.push({ path: '/content_base64', message: 'must be base64 text' });
  for (const name of ['filename', 'mime_type'] as const) {
    const value = record[name];
    if (typeof value !== 'string' || value.length < 1 || value.length > 512) issues.push({ path: `/${name}`, message: 'must be a string of 1 to 512 characters' });
  }
  if (issues.length > 0) throw validationError(issues);
  const bytes = Buffer.from(content as string, 'base64');
  const file = { filename: record.filename as string, mimeType: record.mime_type as string, bytes: bytes.length };
  const uploaded = await begin(fields, file, { bytes: Readable.from([bytes]), callerFault: () => undefined }, ctx.state.gw.signal);
  return { fields, file, uploaded };
}

/** The form's string fields; `metadata[key]` parts (how the openai client sends an object) gather into one. */
function collect(values: Map<string, string>, metadata: Record<string, string>, name: string, value: string): void {
  const nested = /^metadata\[([^\]]+)\]$/.exec(name);
  if (nested) metadata[nested[1]!] = value;
  else values.set(name, value);
}

/**
 * `discard` gets an upload the provider finished although the request failed after it (a second file part, a bad
 * field after the file, a client gone): the provider's file is to be deleted, as no entry will name it.
 */
export function receiveMultipart(ctx: GatewayContext, begin: BeginUpload, discard: (uploaded: Uploaded) => void): Promise<ReceivedUpload> {
  const gw = ctx.state.gw;
  const declared = Number(ctx.get('content-length'));
  if (declared > MULTIPART_FILE_LIMIT + FORM_ALLOWANCE) {
    // Refused before a byte is read or sent upstream.
    drainRefused(ctx);
    return Promise.reject(tooLarge(MULTIPART_FILE_LIMIT, FILES_ROUTE));
  }
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: ctx.req.headers, limits: { files: 1, fileSize: MULTIPART_FILE_LIMIT, fields: 32, fieldSize: FIELD_LIMIT, parts: 40 } });
  } catch (err) {
    return Promise.reject(validationError([{ path: '', message: `not a multipart/form-data body: ${(err as Error).message}` }]));
  }
  const limiter = new BodyLimit(MULTIPART_FILE_LIMIT + FORM_ALLOWANCE, FILES_ROUTE);
  const upstream = new AbortController();
  const values = new Map<string, string>();
  const metadata: Record<string, string> = {};

  return new Promise<ReceivedUpload>((resolve, reject) => {
    let failure: Error | undefined;
    let parsed = false;
    let started: { fields: UploadFields; file: FileDescription; upload: Promise<Uploaded> } | undefined;

    const done = () => gw.signal.removeEventListener('abort', onAbort);
    const settle = () => {
      if (failure) {
        // The upstream request is aborted; the answer waits for it, so no upload outlives the request unnoticed.
        const pending = started?.upload ?? Promise.resolve(undefined);
        pending.then((uploaded) => uploaded && discard(uploaded), () => {}).finally(() => {
          done();
          reject(failure);
        });
        return;
      }
      if (!parsed) return;
      if (!started) {
        reject(validationError([{ path: '/file', message: 'is required: one part named "file"' }]));
        return;
      }
      const { fields, file, upload } = started;
      let late: UploadFields;
      try {
        // Fields after the file part may only be the registry's; they are read again with everything seen.
        late = uploadFields(Object.fromEntries(values), 'multipart', metadata);
      } catch (err) {
        fail(err as Error);
        return;
      }
      upload.then((uploaded) => {
        if (gw.signal.aborted) {
          // The client left while the provider was answering: it will never learn the id.
          fail(abortError());
          return;
        }
        done();
        resolve({ fields: { ...fields, expiresInSeconds: late.expiresInSeconds, metadata: late.metadata }, file, uploaded });
      }, fail);
    };
    const fail = (err: Error) => {
      if (failure) return;
      failure = err;
      upstream.abort(err);
      ctx.req.unpipe(limiter);
      limiter.unpipe(parser);
      drainRefused(ctx);
      settle();
    };
    const onAbort = () => fail(abortError());
    gw.signal.addEventListener('abort', onAbort, { once: true });

    parser.on('field', (name, value, info) => {
      if (info.valueTruncated || info.nameTruncated) fail(validationError([{ path: `/${name}`, message: `must be at most ${FIELD_LIMIT} bytes` }]));
      else collect(values, metadata, name, value);
    });
    parser.on('file', (name, stream, info) => {
      if (failure) {
        stream.resume();
        return;
      }
      if (name !== 'file') {
        stream.resume();
        fail(validationError([{ path: `/${name}`, message: 'is a file part; the upload is the part named "file"' }]));
        return;
      }
      let fields: UploadFields;
      try {
        fields = uploadFields(Object.fromEntries(values), 'multipart', metadata, true);
      } catch (err) {
        stream.resume();
        fail(err as Error);
        return;
      }
      stream.once('limit', () => {
        const err = tooLarge(MULTIPART_FILE_LIMIT, FILES_ROUTE);
        fail(err);
        stream.destroy(err);
      });
      // Unpiped on a failure, the part would wait forever for bytes: an upload reading it between requests (a
      // `parts` plan) would never learn of the failure, nor close the provider's upload.
      upstream.signal.addEventListener('abort', () => stream.destroy(), { once: true });
      const file = { filename: info.filename || 'file', mimeType: info.mimeType || 'application/octet-stream' };
      const source: UploadSource = { bytes: stream, callerFault: () => failure ?? (gw.signal.aborted ? abortError() : undefined) };
      const upload = begin(fields, file, source, upstream.signal);
      upload.catch((err: Error) => fail(err));
      started = { fields, file, upload };
    });
    parser.on('filesLimit', () => fail(validationError([{ path: '/file', message: 'one file per upload: the form has a second file part' }])));
    parser.on('fieldsLimit', () => fail(validationError([{ path: '', message: 'too many form fields' }])));
    parser.on('partsLimit', () => fail(validationError([{ path: '', message: 'too many form parts' }])));
    parser.on('error', (err) => fail(err instanceof GatewayError ? err : validationError([{ path: '', message: `malformed multipart body: ${(err as Error).message}` }])));
    parser.on('close', () => {
      parsed = true;
      if (!failure) settle();
    });
    limiter.on('error', (err) => fail(err));
    ctx.req.once('error', () => fail(abortError()));
    ctx.req.pipe(limiter).pipe(parser);
  });
}
