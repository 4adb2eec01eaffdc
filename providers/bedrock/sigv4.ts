/**
 * AWS Signature Version 4 with node:crypto: the algorithm is a few HMACs, and a dependency would still need
 * the service-specific path rules below. Tested against AWS's published SigV4 test suite and S3's examples.
 *
 * S3 signs differently from every other service (service name `s3`): its canonical path is the path encoded
 * once, not normalized, and every request carries x-amz-content-sha256 (the payload's hash, or UNSIGNED-PAYLOAD).
 */
import { createHash, createHmac } from 'node:crypto';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SignInput {
  method: string;
  /** The absolute URL exactly as it will be sent: the path already percent-encoded. */
  url: string;
  /** Headers to send; every one is signed. `host` is added when absent. */
  headers: Record<string, string>;
  body?: string;
  /**
   * The body is streamed and cannot be hashed (the passthrough, an S3 upload part): the payload is signed as
   * UNSIGNED-PAYLOAD, which x-amz-content-sha256 announces. `body` is then ignored.
   */
  unsignedPayload?: boolean;
  region: string;
  service: string;
  credentials: AwsCredentials;
  /** Signing time, ms since the epoch. */
  now: number;
}

export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';
/** Set by the signer alone: a caller's values for them never survive. */
const SIGNER_HEADERS = new Set(['authorization', 'x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256']);

const sha256 = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

/** RFC 3986 encoding of everything but the unreserved characters, as SigV4 requires. */
export function uriEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** 20150830T123600Z */
export function amzDate(now: number): string {
  return new Date(now).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

const decode = (component: string) => {
  try {
    return decodeURIComponent(component);
  } catch {
    return component;
  }
};

/**
 * The path as sent, normalized ('.', '..', empty segments) and encoded once more: every service but S3
 * signs the doubly encoded path, so a model id sent as `a%3A0` is signed as `a%253A0`.
 */
export function canonicalPath(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const trailing = segments.length > 0 && path.endsWith('/') ? '/' : '';
  return `/${segments.map(uriEncode).join('/')}${trailing}`;
}

/**
 * S3's canonical path: each segment encoded once (a segment sent encoded is decoded first, so `$` and `%24` sign
 * alike), with no normalization: `a//b` and `a/../b` are object keys of their own, not paths to resolve.
 */
export function s3CanonicalPath(path: string): string {
  return path.split('/').map((segment) => uriEncode(decode(segment))).join('/');
}

export function canonicalQuery(query: string): string {
  if (query === '') return '';
  return query.split('&').filter((p) => p !== '').map((pair) => {
    const at = pair.indexOf('=');
    const [name, value] = at === -1 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
    return [uriEncode(decode(name)), uriEncode(decode(value))] as const;
  }).sort(([an, av], [bn, bv]) => (an < bn ? -1 : an > bn ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`).join('&');
}

/** Splits an absolute URL without letting WHATWG URL re-encode or normalize the path. */
function splitUrl(url: string): { host: string; path: string; query: string } {
  const match = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]+)([^?#]*)(?:\?([^#]*))?/i.exec(url);
  if (!match) throw new Error(`cannot sign a request to ${url}: not an absolute URL`);
  return { host: match[1]!, path: match[2] || '/', query: match[3] ?? '' };
}

export function canonicalRequest(input: { method: string; path: string; query: string; headers: Record<string, string>; payloadHash: string; s3?: boolean }): { text: string; signedHeaders: string } {
  const headers = Object.entries(input.headers)
    .map(([name, value]) => [name.toLowerCase(), value.trim().replace(/\s+/g, ' ')] as const)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  const signedHeaders = headers.map(([name]) => name).join(';');
  const text = [
    input.method.toUpperCase(),
    input.s3 ? s3CanonicalPath(input.path) : canonicalPath(input.path),
    canonicalQuery(input.query),
    headers.map(([name, value]) => `${name}:${value}\n`).join(''),
    signedHeaders,
    input.payloadHash,
  ].join('\n');
  return { text, signedHeaders };
}

export function signingKey(secret: string, date: string, region: string, service: string): Buffer {
  return hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
}

/**
 * The request's headers plus x-amz-date, x-amz-security-token (with a session token), x-amz-content-sha256 (for
 * an unsigned payload, and on every S3 request) and authorization.
 */
export function signRequest(input: SignInput): Record<string, string> {
  const { host, path, query } = splitUrl(input.url);
  const stamp = amzDate(input.now);
  const day = stamp.slice(0, 8);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.headers)) {
    // Another signer's headers (a native AWS client behind the passthrough) would be signed as the gateway's.
    if (!SIGNER_HEADERS.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
  }
  headers.host ??= host;
  headers['x-amz-date'] = stamp;
  if (input.credentials.sessionToken) headers['x-amz-security-token'] = input.credentials.sessionToken;
  const s3 = input.service === 's3';
  const payloadHash = input.unsignedPayload ? UNSIGNED_PAYLOAD : sha256(input.body ?? '');
  // S3 refuses a request without it; other services need it only to announce an unsigned payload.
  if (input.unsignedPayload || s3) headers['x-amz-content-sha256'] = payloadHash;
  const canonical = canonicalRequest({ method: input.method, path, query, headers, payloadHash, s3 });
  const scope = `${day}/${input.region}/${input.service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', stamp, scope, sha256(canonical.text)].join('\n');
  const signature = createHmac('sha256', signingKey(input.credentials.secretAccessKey, day, input.region, input.service)).update(toSign, 'utf8').digest('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${input.credentials.accessKeyId}/${scope}, SignedHeaders=${canonical.signedHeaders}, Signature=${signature}`;
  return headers;
}
