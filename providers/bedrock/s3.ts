/**
 * S3, path-style (`{endpoint}/{bucket}/{key}`): the requests the files and batches translators build, and S3's XML
 * answers read back. Object ids are `s3://{bucket}/{key}`, as Bedrock names its input and output locations.
 */
import type { ProviderTarget, UpstreamRequest } from '../../core/dispatch/provider.ts';
import { upstreamStatusError } from '../../core/dispatch/upstream-errors.ts';
import { GatewayError } from '../../core/errors.ts';
import { malformed } from './errors.ts';
import { s3Endpoint } from './endpoints.ts';
import { uriEncode } from './sigv4.ts';
import { listOf, node, parseXml, s3ErrorOf, textOf } from './xml.ts';

/** S3's bucket naming rules (lower case, digits, dots, hyphens; 3 to 63 characters). */
export const BUCKET_PATTERN = '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$';
const BUCKET = new RegExp(BUCKET_PATTERN);

export interface S3Location { bucket: string; key: string }

/** `s3://bucket/some/key` -> its bucket and key (the key may be empty: a bucket's root), or null. */
export function parseS3Uri(uri: string): S3Location | null {
  const match = /^s3:\/\/([^/]+)(?:\/(.*))?$/s.exec(uri);
  if (!match || !BUCKET.test(match[1]!)) return null;
  return { bucket: match[1]!, key: match[2] ?? '' };
}

export const s3Uri = ({ bucket, key }: S3Location) => `s3://${bucket}/${key}`;

/** Each segment of the key encoded on its own: `/` stays the separator, every other byte is sent as S3 signs it. */
const encodedKey = (key: string) => key.split('/').map(uriEncode).join('/');

/** The object's URL, with `query` (already encoded) appended. */
export function objectUrl(target: ProviderTarget, { bucket, key }: S3Location, query = ''): string {
  return `${s3Endpoint(target)}/${bucket}/${encodedKey(key)}${query === '' ? '' : `?${query}`}`;
}

export const getObject = (target: ProviderTarget, location: S3Location): UpstreamRequest =>
  ({ method: 'GET', path: objectUrl(target, location), headers: {} });

export const deleteObject = (target: ProviderTarget, location: S3Location): UpstreamRequest =>
  ({ method: 'DELETE', path: objectUrl(target, location), headers: {} });

/**
 * ListObjectsV2 under a prefix, one page. `encoding-type=url` has S3 percent-encode the keys it lists, since a key
 * may hold characters XML 1.0 cannot carry.
 */
export function listObjects(target: ProviderTarget, bucket: string, prefix: string, continuationToken: string | null): UpstreamRequest {
  const query = [`list-type=2`, `prefix=${uriEncode(prefix)}`, 'encoding-type=url', ...(continuationToken === null ? [] : [`continuation-token=${uriEncode(continuationToken)}`])];
  return { method: 'GET', path: `${s3Endpoint(target)}/${bucket}?${query.join('&')}`, headers: {} };
}

/** An error S3 put in a 200 answer (CompleteMultipartUpload may fail after its status went out): as a 500 would map. */
export function embeddedError(target: ProviderTarget, text: string): GatewayError | null {
  const error = s3ErrorOf(text);
  if (!error) return null;
  return upstreamStatusError(target.slug, 500, `${error.code}: ${error.message}`, { type: error.code, message: error.message });
}

/** CreateMultipartUpload's answer -> its UploadId. */
export function uploadIdOf(target: ProviderTarget, text: string): string {
  const id = textOf(node(parseXml(text).InitiateMultipartUploadResult).UploadId);
  if (!id) throw malformed(target, 'CreateMultipartUpload answer (no UploadId)');
  return id;
}

/** Element text: quotes may stay (an ETag is quoted), markup may not. */
const xmlEscape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** CompleteMultipartUpload's body: every part by its 1-based number, with the ETag its upload answered. */
export function completeBody(parts: ReadonlyArray<{ partNumber: number; etag: string }>): string {
  const listed = parts.map((p) => `<Part><PartNumber>${p.partNumber}</PartNumber><ETag>${xmlEscape(p.etag)}</ETag></Part>`).join('');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${listed}</CompleteMultipartUpload>`;
}

/** A CompleteMultipartUpload answer that is not its result (an embedded error, or nothing S3 would send). */
export function checkCompleted(target: ProviderTarget, text: string): void {
  const error = embeddedError(target, text);
  if (error) throw error;
  if (!('CompleteMultipartUploadResult' in parseXml(text))) throw malformed(target, 'CompleteMultipartUpload answer');
}

export interface ListedObject { key: string; bytes: number }

/** `encoding-type=url` keys: form-encoded, so `+` is a space. */
function decodedKey(target: ProviderTarget, key: string): string {
  try {
    return decodeURIComponent(key.replace(/\+/g, ' '));
  } catch {
    throw malformed(target, 'ListObjectsV2 answer (a key that is not URL-encoded)');
  }
}

/** One ListObjectsV2 page -> its objects and the token of the next page (null on the last). */
export function listedPage(target: ProviderTarget, text: string): { objects: ListedObject[]; next: string | null } {
  const doc = parseXml(text);
  if (!('ListBucketResult' in doc)) throw malformed(target, 'ListObjectsV2 answer');
  const result = node(doc.ListBucketResult);
  const objects = listOf(result.Contents).map((entry) => {
    const { Key, Size } = node(entry);
    const bytes = Number(textOf(Size));
    if (typeof Key !== 'string' || !Number.isSafeInteger(bytes) || bytes < 0) throw malformed(target, 'ListObjectsV2 answer (an object without a key or size)');
    return { key: decodedKey(target, Key), bytes };
  });
  const truncated = textOf(result.IsTruncated) === 'true';
  const next = textOf(result.NextContinuationToken);
  if (truncated && !next) throw malformed(target, 'ListObjectsV2 answer (truncated, with no continuation token)');
  return { objects, next: truncated ? next! : null };
}
