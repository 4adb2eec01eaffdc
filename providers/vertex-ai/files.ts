/**
 * Files on Vertex AI are Cloud Storage objects (what batch prediction jobs and gs:// file parts read), uploaded by
 * the JSON API's resumable protocol in chunks: a start request with the object's metadata, answered with the
 * session URI in `Location`; then each chunk PUT to it with `Content-Range: bytes first-last/*`, the last naming
 * the total (`bytes first-last/total`; an empty file names only its total, 0). Chunks before the last are a
 * multiple of 256 KiB; each is answered 308 until the last, answered 200 or 201 with the object resource. A
 * DELETE of the session URI cancels it (answered 499). The provider file id is `gs://bucket/object`; its bytes are
 * the object's media (`?alt=media`).
 */
import { randomUUID } from 'node:crypto';
import type { FilesTranslator, ProviderTarget, UploadAnswer, UploadPart } from '../../core/dispatch/provider.ts';
import { malformedAnswer, withoutContentType } from '../shared/files.ts';
import { headers } from './chat.ts';
import { objectOf, objectResource, objectUrl, storageUrl, uploadBucket } from './storage.ts';

/** 32 x 256 KiB: few enough requests for a large file, little enough held while one is in flight. */
export const GCS_CHUNK_BYTES = 8 * 1024 * 1024;
/** 308 Resume Incomplete: the chunk is stored and the session waits for the next. */
const RESUME_INCOMPLETE = 308;

const storageHeaders = (target: ProviderTarget) => withoutContentType(headers(target));

const header = (all: Record<string, string | string[] | undefined>, name: string) => {
  const value = all[name];
  return Array.isArray(value) ? value[0] : value;
};

/** The session URI the start answered; the bytes and the token go only to the storage URL's own origin. */
function sessionUri(session: UploadAnswer, target: ProviderTarget): string {
  const uri = header(session.headers, 'location');
  if (!uri || !URL.canParse(uri) || new URL(uri).origin !== new URL(storageUrl(target)).origin) {
    throw malformedAnswer(target, 'resumable upload start answer (no Location on the storage URL\'s own origin)');
  }
  return uri;
}

/** A chunk's place in the object; the total is named once known, on the last chunk. */
export function contentRange(part: UploadPart): string {
  if (part.bytes === 0) return `bytes */${part.total ?? '*'}`;
  return `bytes ${part.offset}-${part.offset + part.bytes - 1}/${part.last ? part.total : '*'}`;
}

export const vertexFiles: FilesTranslator = {
  upload(file, target) {
    const { bucket, prefix } = uploadBucket(target);
    // A fresh folder per upload: two files of one name never overwrite each other.
    const name = `${prefix}${randomUUID()}/${file.filename}`;
    const start: Record<string, string> = { ...headers(target), 'x-upload-content-type': file.mimeType };
    if (file.bytes !== undefined) start['x-upload-content-length'] = String(file.bytes);
    return {
      kind: 'parts',
      partBytes: GCS_CHUNK_BYTES,
      start: {
        method: 'POST',
        path: `${storageUrl(target)}/upload/storage/v1/b/${encodeURIComponent(bucket)}/o?uploadType=resumable&name=${encodeURIComponent(name)}`,
        headers: start,
        body: JSON.stringify({ contentType: file.mimeType, metadata: { purpose: file.purpose } }),
      },
      part: (session, part) => ({ method: 'PUT', path: sessionUri(session, target), headers: { ...storageHeaders(target), 'content-range': contentRange(part) } }),
      continueStatuses: [RESUME_INCOMPLETE],
      finish(_session, answer) {
        // A last chunk answered 308 left the object unfinished (Cloud Storage kept fewer bytes than were sent).
        if (answer.status !== 200 && answer.status !== 201) throw malformedAnswer(target, `upload (the last chunk was answered ${answer.status}, not the object)`);
        let body: unknown;
        try {
          body = JSON.parse(answer.text);
        } catch {
          throw malformedAnswer(target, 'upload answer (not JSON)');
        }
        return { ...objectResource(body, target), expiresAt: null };
      },
      // Cloud Storage documents the cancel with an explicit empty body.
      abort: (session) => ({ method: 'DELETE', path: sessionUri(session, target), headers: { ...storageHeaders(target), 'content-length': '0' } }),
    };
  },
  // Cloud Storage keeps an object until it is deleted (a bucket's lifecycle rules aside).
  fromUpload: (body, target) => ({ ...objectResource(body, target), expiresAt: null }),
  delete: (id, target) => ({ method: 'DELETE', path: objectUrl(target, objectOf(target, id)), headers: storageHeaders(target) }),
  download: (id, target) => ({ method: 'GET', path: `${objectUrl(target, objectOf(target, id))}?alt=media`, headers: storageHeaders(target) }),
};
