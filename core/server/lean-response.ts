/**
 * Koa's `response.set` and the `response.type` setter, as Koa 3 defines them but without their per-call garbage,
 * installed on the app's response prototype (`app.response`, which Koa documents for extending ctx.response).
 * Every request sets about eight headers through them (the request id, the provider and model, the rate-limit
 * window, and Koa's own Content-Type and Content-Length): Koa's `set` makes an entries array, a mapped copy, a
 * lower-cased name and a closure per call, and its `type` setter asks mime-types to resolve the same few names
 * ('json', 'text', 'bin') on every response.
 */
import assert from 'node:assert';
import { createRequire } from 'node:module';
import type Koa from 'koa';

/** The resolver Koa's own `type` setter uses (its dependency, resolved from Koa's folder): the same answers. */
const mime = createRequire(createRequire(import.meta.url).resolve('koa'))('mime-types') as { contentType(type: string): string | false };

type HeaderValue = string | number | readonly string[];

interface ResponseLike {
  readonly headerSent: boolean;
  readonly res: { setHeader(name: string, value: HeaderValue): unknown; removeHeader(name: string): void };
  set(field: string | Record<string, HeaderValue>, value?: HeaderValue): void;
  remove(field: string): void;
}

/** Content-Type and Content-Length take one value: an array must hold exactly one, which is set (as Koa does). */
function single(field: string, value: HeaderValue): HeaderValue {
  if (!Array.isArray(value)) return value;
  const name = field.toLowerCase();
  if (name !== 'content-type' && name !== 'content-length') return value;
  assert(value.length === 1, `${field} must contain exactly one value`);
  return value[0]!;
}

function set(this: ResponseLike, field: string | Record<string, HeaderValue>, value?: HeaderValue): void {
  if (this.headerSent || !field) return;
  if (typeof field === 'string') {
    this.res.setHeader(field, single(field, value!));
    return;
  }
  for (const name of Object.keys(field)) this.res.setHeader(name, single(name, field[name]!));
}

/** The names a gateway gives `type` are few; anything past this many is resolved each time, as Koa does. */
const TYPE_CACHE_LIMIT = 64;
const contentTypes = new Map<string, string | false>();

function contentTypeOf(type: string): string | false {
  let resolved = contentTypes.get(type);
  if (resolved === undefined) {
    resolved = mime.contentType(type);
    if (contentTypes.size < TYPE_CACHE_LIMIT) contentTypes.set(type, resolved);
  }
  return resolved;
}

export function installLeanResponse(app: Koa): void {
  const response = app.response as unknown as ResponseLike;
  Object.defineProperty(response, 'set', { value: set, writable: true, configurable: true });
  const koaType = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(response), 'type');
  if (!koaType?.get) throw new Error('Koa\'s response has no type accessor: this Koa is not the one the gateway was written for');
  Object.defineProperty(response, 'type', {
    configurable: true,
    get: koaType.get,
    set(this: ResponseLike, type: string) {
      const resolved = typeof type === 'string' ? contentTypeOf(type) : false;
      if (resolved) this.set('Content-Type', resolved);
      else this.remove('Content-Type');
    },
  });
}
