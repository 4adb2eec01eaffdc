/**
 * Where a passthrough request goes: the caller's path, validated and still percent-encoded, joined under the
 * provider's base path by string concatenation. Nothing here hands the caller's path to a URL parser: WHATWG
 * `new URL()` turns `\` into `/` and resolves `..` and `%2e%2e`, which is how a path once left the base path.
 * Whatever could make some parser on the way (ours, a proxy's, the provider's) see a different path is refused.
 */
import { GatewayError } from '../errors.ts';

export interface UpstreamTarget {
  /** scheme://host[:port] of the base URL. */
  origin: string;
  /** The base path (no trailing slash), the caller's path, then the base URL's query and the caller's. */
  path: string;
  /** `path` relative to the base URL (the caller's path and query), when the base URL has no query of its own. */
  relative?: string;
}

/** RFC 3986 pchar plus `/` and `%`: what a path may carry as is. */
const PATH_SAFE = /[A-Za-z0-9\-._~!$&'()*+,;=:@/%]/;
/** A query may carry `?` too. */
const QUERY_SAFE = /[A-Za-z0-9\-._~!$&'()*+,;=:@/%?]/;
const CONTROL = /[\u0000-\u001f\u007f]/;
const BAD_PERCENT = /%(?![0-9A-Fa-f]{2})/;
/** A URL is decoded at most this many times by anything we know of; each layer is checked. */
const DECODE_ROUNDS = 3;

const refuse = (message: string) =>
  new GatewayError('VALIDATION_ERROR', `The passthrough path is refused: ${message}`, [{ path: 'path', message }]);

/** Characters outside `safe` as percent-encoded bytes (code points up to 0xff are Node's latin1 request bytes). */
function encodeUnsafe(text: string, safe: RegExp): string {
  let out = '';
  for (const char of text) {
    if (safe.test(char)) {
      out += char;
      continue;
    }
    const code = char.codePointAt(0)!;
    const bytes = code <= 0xff ? Buffer.from([code]) : Buffer.from(char, 'utf8');
    for (const byte of bytes) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** One round of percent-decoding into UTF-8 text (invalid sequences become U+FFFD, never an exception). */
function decodeOnce(text: string): string {
  if (!text.includes('%')) return text;
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(text[i]!, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** `.` or `..` as a server could read a segment: after Unicode folding (U+FF0E) and without `;params` (`..;`). */
function isDotSegment(segment: string): boolean {
  const bare = segment.normalize('NFKC').split(';', 1)[0]!;
  return bare === '.' || bare === '..';
}

/**
 * Throws unless the encoded path, read at every decoding depth as UTF-8, keeps its segments: no `\`, NUL,
 * control character or dot segment appears however many times a server decodes it.
 */
function checkEncodedPath(path: string): void {
  let layer = path;
  for (let round = 0; round <= DECODE_ROUNDS; round++) {
    if (layer.includes('\\')) throw refuse('a backslash (also %5C) is not allowed');
    if (CONTROL.test(layer)) throw refuse('NUL and control characters (also percent-encoded) are not allowed');
    if (layer.split('/').some(isDotSegment)) throw refuse('"." and ".." segments (also percent-encoded) are not allowed');
    const next = decodeOnce(layer);
    if (next === layer) return;
    layer = next;
  }
  throw refuse(`percent-encoding nested more than ${DECODE_ROUNDS} deep is not allowed`);
}

/**
 * Joins `requestTarget` (what follows /proxy/<slug> in the request line: a path starting with `/`, then
 * optionally `?` and the query, exactly as received) under `baseUrl`. Throws VALIDATION_ERROR for a path it
 * refuses. The result's path always starts with the base path followed by `/`.
 */
export function joinUnderBase(baseUrl: string, requestTarget: string): UpstreamTarget {
  const queryAt = requestTarget.indexOf('?');
  const rawPath = queryAt === -1 ? requestTarget : requestTarget.slice(0, queryAt);
  const rawQuery = queryAt === -1 ? '' : requestTarget.slice(queryAt + 1);
  if (!rawPath.startsWith('/')) throw refuse('the path must start with "/"');
  if (rawPath.includes('\\')) throw refuse('a backslash (also %5C) is not allowed');
  if (requestTarget.includes('#')) throw refuse('a fragment (#) is not allowed');
  if (BAD_PERCENT.test(rawPath)) throw refuse('a "%" in the path must start a percent-encoded byte');
  if (CONTROL.test(rawQuery)) throw refuse('NUL and control characters are not allowed in the query');
  // A leading `//` would read as an authority to any URL parser downstream; one slash means the same path.
  const path = encodeUnsafe(rawPath.replace(/^\/+/, '/'), PATH_SAFE);
  // Checked once encoded: raw bytes over 0x7f are only read as UTF-8 (U+FF0E, a fullwidth dot) by then.
  checkEncodedPath(path);
  const query = encodeUnsafe(rawQuery, QUERY_SAFE);

  const base = new URL(baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const baseQuery = base.search.slice(1);
  const joinedQuery = [baseQuery, query].filter(Boolean).join('&');
  const target: UpstreamTarget = { origin: base.origin, path: `${basePath}${path}${joinedQuery ? `?${joinedQuery}` : ''}` };
  if (!baseQuery) target.relative = `${path}${query ? `?${query}` : ''}`;
  return target;
}
