/**
 * The JSON body of an uncompressed request, read without koa-body: the chunks collected up to the limit, one
 * JSON.parse. It answers exactly as koa-body (co-body, raw-body) did, so the 413/400 envelopes do not change: a
 * declared Content-Length over the limit is refused before a byte is read, a body that grows past the limit as
 * soon as it does, a body shorter or longer than its Content-Length, an aborted one, an empty one read as `{}`,
 * a top level that is not an object or array, and an own `__proto__` key (which a later spread or merge would
 * turn into a prototype) are errors with the same status, type and message.
 */
import type { IncomingMessage } from 'node:http';

/** What raw-body and co-body put on their errors; body.ts maps it to the gateway's envelope. */
export class BodyReadError extends Error {
  constructor(message: string, readonly status: number, readonly type: string) {
    super(message);
  }
}

const STRICT_JSON_START = /^[\x20\x09\x0a\x0d]*(\[|\{)/;
// @hapi/bourne's test: any spelling of "__proto__" as a key, escapes included.
const PROTO_KEY = /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"/;

export function readRawBody(req: IncomingMessage, limitBytes: number): Promise<string> {
  const declared = req.headers['content-length'];
  const length = declared ? ~~declared : null;
  if (length !== null && length > limitBytes) {
    return Promise.reject(new BodyReadError('request entity too large', 413, 'entity.too.large'));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (err: BodyReadError | Error | null) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      req.off('close', onClose);
      req.off('error', finish);
      if (err) {
        // As raw-body: stop reading; the 413 path's drain resumes the request to read and drop the rest.
        req.unpipe();
        req.pause();
        reject(err);
        return;
      }
      const buffer = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received);
      const text = buffer.toString('utf8');
      // iconv-lite's UTF-8 decoder (raw-body's) drops a byte-order mark.
      resolve(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limitBytes) finish(new BodyReadError('request entity too large', 413, 'entity.too.large'));
      else chunks.push(chunk);
    };
    const onEnd = () => {
      if (length !== null && received !== length) finish(new BodyReadError('request size did not match content length', 400, 'request.size.invalid'));
      else finish(null);
    };
    const onAborted = () => finish(new BodyReadError('request aborted', 400, 'request.aborted'));
    const onClose = () => finish(new BodyReadError('request aborted', 400, 'request.aborted'));
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('aborted', onAborted);
    req.once('close', onClose);
    req.once('error', finish);
  });
}

/** co-body's strict JSON: `{}` for an empty body, only an object or array at the top. */
export function parseStrictJson(text: string): unknown {
  if (!text) return {};
  try {
    if (!STRICT_JSON_START.test(text)) throw new SyntaxError('invalid JSON, only supports object and array');
    const parsed: unknown = JSON.parse(text);
    if (PROTO_KEY.test(text) && hasOwnProtoKey(parsed)) throw new SyntaxError('Object contains forbidden prototype property');
    return parsed;
  } catch (err) {
    throw new BodyReadError((err as Error).message, 400, 'entity.parse.failed');
  }
}

function hasOwnProtoKey(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item !== 'object' || item === null) continue;
    if (!Array.isArray(item) && Object.prototype.hasOwnProperty.call(item, '__proto__')) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) pending.push(child);
  }
  return false;
}
