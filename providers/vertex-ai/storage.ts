/**
 * Cloud Storage's JSON API as Vertex AI's files and batch results use it: where the options say objects go, the
 * URLs of an object and of a bucket's listing, and `gs://bucket/object` URIs (the provider file ids). Every
 * request carries the provider's OAuth token (authorizeVertex: the cloud-platform scope covers storage).
 */
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import type { JsonSchema } from '../../core/json-schema.ts';
import { GatewayError } from '../../core/errors.ts';
import { malformedAnswer } from '../shared/files.ts';

export const DEFAULT_STORAGE_URL = 'https://storage.googleapis.com';
export const DEFAULT_GCS_PREFIX = 'aigw/';

export const vertexStorageOptions: Record<string, JsonSchema> = {
  gcsBucket: {
    // Cloud Storage's bucket naming rules: lowercase letters, digits, dashes, underscores and dots.
    type: 'string', pattern: '^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$',
    description: 'Files: the Cloud Storage bucket uploads to /v1/files go to (the token needs storage.objects.create and delete on it). Without it an upload to vertex-ai is refused with 400 CAPABILITY_NOT_SUPPORTED before any upstream call.',
  },
  gcsPrefix: {
    type: 'string', pattern: '^(?!/)', default: DEFAULT_GCS_PREFIX,
    description: 'Files: the start of every uploaded object\'s name; an upload is stored as {gcsPrefix}{uuid}/{filename}.',
  },
  storageUrl: {
    type: 'string', pattern: '^https?://', default: DEFAULT_STORAGE_URL,
    description: 'Base URL of the Cloud Storage JSON API: uploads, deletions, and the listing and reading of batch prediction results.',
  },
};

interface StorageOptions { gcsBucket?: string; gcsPrefix?: string; storageUrl?: string }

/** The JSON API's origin, without a trailing slash. */
export function storageUrl(target: ProviderTarget): string {
  return ((target.options as StorageOptions).storageUrl ?? DEFAULT_STORAGE_URL).replace(/\/+$/, '');
}

/** Where uploads go; refused before any I/O when the operator named no bucket. */
export function uploadBucket(target: ProviderTarget): { bucket: string; prefix: string } {
  const { gcsBucket, gcsPrefix } = target.options as StorageOptions;
  if (!gcsBucket) {
    throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${target.slug} does not support file uploads without options.gcsBucket (the Cloud Storage bucket they go to)`,
      { provider: target.slug, capability: 'files' });
  }
  return { bucket: gcsBucket, prefix: gcsPrefix ?? DEFAULT_GCS_PREFIX };
}

export interface GcsObject { bucket: string; name: string }

/** `gs://bucket/a/b.jsonl` -> {bucket, name: "a/b.jsonl"}; null for anything else. */
export function parseGsUri(uri: string): GcsObject | null {
  const match = /^gs:\/\/([^/]+)\/(.+)$/.exec(uri);
  return match ? { bucket: match[1]!, name: match[2]! } : null;
}

export const gsUri = (object: GcsObject) => `gs://${object.bucket}/${object.name}`;

/** An object's resource: the whole name is one path segment, its slashes escaped. */
export function objectUrl(target: ProviderTarget, object: GcsObject): string {
  return `${storageUrl(target)}/storage/v1/b/${encodeURIComponent(object.bucket)}/o/${encodeURIComponent(object.name)}`;
}

/** A provider file id the gateway made (or a result file it registered), as the object it names. */
export function objectOf(target: ProviderTarget, providerFileId: string): GcsObject {
  const object = parseGsUri(providerFileId);
  if (!object) throw new GatewayError('UPSTREAM_ERROR', `${target.slug}: the file id ${providerFileId} is not a gs://bucket/object URI`, { provider: target.slug });
  return object;
}

/** int64 fields arrive as JSON strings. */
export function int64(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/** An object resource (an upload's final answer): its gs:// id and size. */
export function objectResource(body: unknown, target: ProviderTarget): { id: string; bytes?: number } {
  const object = body as { bucket?: unknown; name?: unknown; size?: unknown } | null;
  if (!object || typeof object.bucket !== 'string' || typeof object.name !== 'string' || object.bucket === '' || object.name === '') {
    throw malformedAnswer(target, 'object resource (no bucket and name)');
  }
  const bytes = int64(object.size);
  return { id: gsUri({ bucket: object.bucket, name: object.name }), ...(bytes === undefined ? {} : { bytes }) };
}

/** One page of a listing: the objects directly under the prefix (`delimiter=/` leaves out deeper ones). */
export function listUrl(target: ProviderTarget, bucket: string, prefix: string, pageToken?: string): string {
  const query = new URLSearchParams({ prefix, delimiter: '/' });
  if (pageToken) query.set('pageToken', pageToken);
  return `${storageUrl(target)}/storage/v1/b/${encodeURIComponent(bucket)}/o?${query}`;
}

export interface ListPage { objects: Array<GcsObject & { bytes: number }>; nextPageToken: string | null }

export function readListPage(text: string, bucket: string, target: ProviderTarget): ListPage {
  let page: { items?: unknown; nextPageToken?: unknown } | null;
  try {
    page = JSON.parse(text) as typeof page;
  } catch {
    throw malformedAnswer(target, 'object listing (not JSON)');
  }
  // An empty listing has no items field at all.
  const items = page?.items ?? [];
  if (!page || typeof page !== 'object' || !Array.isArray(items)) throw malformedAnswer(target, 'object listing');
  const objects = items.map((item) => {
    const object = item as { name?: unknown; size?: unknown } | null;
    const bytes = int64(object?.size);
    if (typeof object?.name !== 'string' || bytes === undefined) throw malformedAnswer(target, 'object listing (an item without name or size)');
    return { bucket, name: object.name, bytes };
  });
  return { objects, nextPageToken: typeof page.nextPageToken === 'string' && page.nextPageToken !== '' ? page.nextPageToken : null };
}
