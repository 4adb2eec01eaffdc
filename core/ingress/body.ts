/**
 * Reads a JSON body with a byte limit: a declared Content-Length over the limit is refused before a byte is
 * read, a chunked body as soon as it crosses the limit. A body nested deeper than MAX_JSON_DEPTH is refused
 * too: schema validation, token estimates and translators walk bodies recursively and would overflow the stack.
 */
import { drainRefused } from './drain.ts';
import type { Context, Middleware } from 'koa';
import { GatewayError } from '../errors.ts';
import { parseStrictJson, readRawBody } from './json-reader.ts';

/**
 * Arrays and objects inside each other, the outermost counting 1. JSON Schemas of tools and structured outputs
 * nest a few levels per property; providers accept far less than this (OpenAI: 10 levels of schema nesting).
 */
export const MAX_JSON_DEPTH = 128;

type BodyReader = (ctx: Context) => Promise<unknown>;
const readers = new Map<number, BodyReader>();
/** Methods koa-body parses; on others the body is left unread, as it was. */
const PARSED_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** Content-Type header values seen, and whether each is JSON as Koa's ctx.is says; callers choose it, so bounded. */
const jsonTypes = new Map<string, boolean>();
const JSON_TYPES_KEPT = 64;

/**
 * ctx.is('application/json', '+json'), its answer kept per header value: type-is parses the header and looks both
 * types up on every call (about 1% of a request's CPU), for the one or two values a client ever sends.
 */
function isJsonBody(ctx: Context): boolean {
  const { headers } = ctx.req;
  // type-is's own test for a body: without one, ctx.is answers null whatever the type.
  if (headers['transfer-encoding'] === undefined && Number.isNaN(Number(headers['content-length']))) return false;
  const type = headers['content-type'];
  if (type === undefined) return false;
  let json = jsonTypes.get(type);
  if (json === undefined) {
    json = Boolean(ctx.is('application/json', '+json'));
    if (jsonTypes.size >= JSON_TYPES_KEPT) jsonTypes.clear();
    jsonTypes.set(type, json);
  }
  return json;
}

export function jsonBodyReader(limitBytes: number): BodyReader {
  let reader = readers.get(limitBytes);
  if (reader) return reader;
  let compressed: Promise<Middleware> | undefined;
  const noop = async () => {};
  reader = async (ctx: Context) => {
    if (!isJsonBody(ctx)) {
      throw new GatewayError('VALIDATION_ERROR', 'Request body must be JSON (Content-Type: application/json)', [{ path: '', message: 'Content-Type must be application/json' }]);
    }
    let body: unknown;
    try {
      const encoding = ctx.req.headers['content-encoding'];
      if (encoding === undefined || encoding === 'identity') {
        body = PARSED_METHODS.has(ctx.method.toUpperCase()) ? parseStrictJson(await readRawBody(ctx.req, limitBytes)) : ctx.request.body;
      } else {
        // Compressed bodies are rare: koa-body (and zod, which it loads) only on the first one.
        compressed ??= import('koa-body').then(({ koaBody }) => koaBody({ json: true, jsonStrict: true, jsonLimit: limitBytes, multipart: false, urlencoded: false, text: false, patchNode: false, patchKoa: true }));
        await (await compressed)(ctx, noop);
        body = ctx.request.body;
      }
    } catch (err) {
      throw bodyError(ctx, err, limitBytes);
    }
    if (nestsDeeperThan(body, MAX_JSON_DEPTH)) {
      throw new GatewayError('VALIDATION_ERROR', `Request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`,
        [{ path: '', message: `nests deeper than ${MAX_JSON_DEPTH} levels` }]);
    }
    return body;
  };
  readers.set(limitBytes, reader);
  return reader;
}

function bodyError(ctx: Context, err: unknown, limitBytes: number): GatewayError {
  const e = err as { status?: number; type?: string; message?: string };
  if (e.status === 413 || e.type === 'entity.too.large') {
    drainRefused(ctx);
    return new GatewayError('PAYLOAD_TOO_LARGE', `Request body exceeds the limit of ${limitBytes} bytes for ${ctx.path}`, { limitBytes });
  }
  if (e.type === 'entity.parse.failed' || e.status === 400) {
    return new GatewayError('VALIDATION_ERROR', 'Request body is not valid JSON', [{ path: '', message: e.message ?? 'malformed JSON' }]);
  }
  if (e.status === 415) {
    return new GatewayError('VALIDATION_ERROR', 'Unsupported request body encoding', [{ path: '', message: e.message ?? 'unsupported encoding' }]);
  }
  return new GatewayError('VALIDATION_ERROR', 'Request body could not be read', [{ path: '', message: e.message ?? 'read failed' }]);
}

/** Walks with its own stack, not recursion: the point is to survive input that would overflow the call stack. */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth > maxDepth) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (typeof child === 'object' && child !== null) pending.push([child, depth + 1]);
    }
  }
  return false;
}
