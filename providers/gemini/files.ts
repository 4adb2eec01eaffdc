/**
 * The Gemini API's File API, by its resumable protocol: a start request to `/upload/<version>/files` with the
 * file's metadata, answered with the upload URL in X-Goog-Upload-URL; then the bytes to that URL with
 * `upload, finalize`, answered with {file: {name: "files/...", sizeBytes, expirationTime}}. The provider file id
 * is the resource name (`files/abc`); DELETE /files/abc removes it. A multipart upload's size is not known before
 * its bytes have streamed, so the start request declares it only for JSON (base64) uploads.
 */
import type { FilesTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { malformedAnswer, withoutContentType } from '../shared/files.ts';
import { geminiApiHeaders } from './chat.ts';

/** The upload endpoint sits beside the API's version path: https://host/upload/v1beta/files. */
function uploadUrl(target: ProviderTarget): { url: string; origin: string } {
  const base = new URL(target.baseUrl);
  return { url: `${base.origin}/upload${base.pathname.replace(/\/+$/, '')}/files${base.search}`, origin: base.origin };
}

const header = (headers: Record<string, string | string[] | undefined>, name: string) => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

export const geminiFiles: FilesTranslator = {
  upload(file, target) {
    const { url, origin } = uploadUrl(target);
    const headers: Record<string, string> = {
      ...geminiApiHeaders(target),
      'x-goog-upload-protocol': 'resumable',
      'x-goog-upload-command': 'start',
      'x-goog-upload-header-content-type': file.mimeType,
    };
    if (file.bytes !== undefined) headers['x-goog-upload-header-content-length'] = String(file.bytes);
    return {
      kind: 'resumable',
      start: { method: 'POST', path: url, headers, body: JSON.stringify({ file: { display_name: file.filename } }) },
      bytes(startHeaders) {
        const next = header(startHeaders, 'x-goog-upload-url');
        // The bytes and the key go only where the start request went: never to a host an answer names.
        if (!next || !URL.canParse(next) || new URL(next).origin !== origin) throw malformedAnswer(target, 'upload start answer (no X-Goog-Upload-URL of its own origin)');
        return {
          method: 'POST',
          path: next,
          headers: { ...withoutContentType(geminiApiHeaders(target)), 'x-goog-upload-command': 'upload, finalize', 'x-goog-upload-offset': '0' },
        };
      },
    };
  },
  fromUpload(body, target) {
    const file = (body as { file?: { name?: unknown; sizeBytes?: unknown; expirationTime?: unknown } } | null)?.file;
    if (!file || typeof file.name !== 'string' || !file.name.startsWith('files/')) throw malformedAnswer(target, 'upload answer (no file name)');
    const bytes = Number(file.sizeBytes);
    const expires = typeof file.expirationTime === 'string' ? Date.parse(file.expirationTime) : NaN;
    return { id: file.name, ...(Number.isSafeInteger(bytes) ? { bytes } : {}), expiresAt: Number.isFinite(expires) ? expires : null };
  },
  delete(id, target) {
    // The id is the resource name the upload returned: `files/<name>`, one path segment after `files/`.
    const name = id.startsWith('files/') ? id.slice('files/'.length) : id;
    return { method: 'DELETE', path: `/files/${encodeURIComponent(name)}`, headers: withoutContentType(geminiApiHeaders(target)) };
  },
};
