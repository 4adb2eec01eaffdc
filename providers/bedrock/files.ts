/**
 * Files on Bedrock are S3 objects: Bedrock reads batch inputs and writes batch outputs in S3, and has no files
 * API of its own. An upload streams as an S3 multipart upload in parts of 8 MiB (CreateMultipartUpload, UploadPart
 * with 1-based numbers, CompleteMultipartUpload listing each part's ETag; AbortMultipartUpload when it fails) to
 * `{s3Prefix}{uuid}/{filename}` in options.s3Bucket. The provider file id is `s3://{bucket}/{key}`, what a batch
 * job's inputDataConfig names; deleting it is DeleteObject, reading it back GetObject.
 */
import { randomUUID } from 'node:crypto';
import { unsupported } from '../../core/dispatch/exchange.ts';
import type { FilesTranslator, ProviderTarget, UploadAnswer } from '../../core/dispatch/provider.ts';
import { awsCredentials } from './auth.ts';
import { DEFAULT_S3_PREFIX, optionsOf, s3Endpoint } from './endpoints.ts';
import { malformed } from './errors.ts';
import { checkCompleted, completeBody, deleteObject, getObject, objectUrl, parseS3Uri, s3Uri, uploadIdOf, type S3Location } from './s3.ts';
import { uriEncode } from './sigv4.ts';

/** S3 takes parts of 5 MiB at least (but the last); 8 MiB keeps a 512 MiB upload at 64 parts, far from its 10,000. */
export const S3_PART_BYTES = 8 * 1024 * 1024;

/**
 * The filename as one key segment: `/`, `\` and control characters become `_` (a name cannot add folders to the
 * key), at most 200 characters; a name that is nothing or a dot segment is `file`.
 */
export function keySegment(filename: string): string {
  const cleaned = Array.from(filename.replace(/[/\\\u0000-\u001f\u007f]/g, '_')).slice(0, 200).join('');
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? 'file' : cleaned;
}

/** A media type the caller gave, reduced to what a header may carry. */
const safeType = (type: string) => (/^[\w!#$&^.+-]+\/[\w!#$&^.+-]+$/.test(type) ? type : 'application/octet-stream');

const header = (headers: UploadAnswer['headers'], name: string) => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** Refused before any I/O: a target without a bucket or AWS credentials has nowhere to put files. */
function uploadLocation(target: ProviderTarget, filename: string): S3Location {
  const { s3Bucket, s3Prefix } = optionsOf(target);
  if (!s3Bucket) throw unsupported(target.slug, 'files until options.s3Bucket names the S3 bucket uploads go to', { capability: 'files' });
  if (!awsCredentials(target)) {
    throw unsupported(target.slug, 'files without AWS credentials (options.accessKeyId and options.secretAccessKey: S3 does not take a Bedrock API key)', { capability: 'files' });
  }
  s3Endpoint(target); // throws when no region names the endpoint
  return { bucket: s3Bucket, key: `${s3Prefix ?? DEFAULT_S3_PREFIX}${randomUUID()}/${keySegment(filename)}` };
}

/** The object a provider file id names (`s3://bucket/key`, what the upload returned). */
function objectOf(target: ProviderTarget, id: string): S3Location {
  const location = parseS3Uri(id);
  if (!location || location.key === '') throw malformed(target, `file id ${JSON.stringify(id)} (not s3://bucket/key)`);
  return location;
}

export const bedrockFiles: FilesTranslator = {
  upload(file, target) {
    const location = uploadLocation(target, file.filename);
    const withUpload = (session: UploadAnswer) => `uploadId=${uriEncode(uploadIdOf(target, session.text))}`;
    return {
      kind: 'parts',
      partBytes: S3_PART_BYTES,
      start: { method: 'POST', path: objectUrl(target, location, 'uploads'), headers: { 'content-type': safeType(file.mimeType) } },
      part: (session, part) => ({ method: 'PUT', path: objectUrl(target, location, `partNumber=${part.index + 1}&${withUpload(session)}`), headers: {} }),
      complete(session, parts) {
        const listed = parts.map((p) => {
          const etag = header(p.headers, 'etag');
          if (!etag) throw malformed(target, `UploadPart answer (no ETag for part ${p.part.index + 1})`);
          return { partNumber: p.part.index + 1, etag };
        });
        return { method: 'POST', path: objectUrl(target, location, withUpload(session)), headers: { 'content-type': 'application/xml' }, body: completeBody(listed) };
      },
      finish(_session, answer) {
        checkCompleted(target, answer.text);
        return { id: s3Uri(location), expiresAt: null };
      },
      abort: (session) => ({ method: 'DELETE', path: objectUrl(target, location, withUpload(session)), headers: {} }),
    };
  },
  fromUpload(_body, target) {
    // Every upload is a `parts` plan, finished by `finish`: no JSON answer ever names a Bedrock file.
    throw malformed(target, 'upload answer (S3 uploads end with CompleteMultipartUpload)');
  },
  delete: (id, target) => deleteObject(target, objectOf(target, id)),
  // A GET has no body: the signer hashes the empty payload, as S3 requires of a signed request.
  download: (id, target) => getObject(target, objectOf(target, id)),
};
