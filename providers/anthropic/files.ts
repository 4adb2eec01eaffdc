/**
 * Anthropic's Files API (beta `files-api-2025-04-14`): POST /files multipart with the one part `file`, answered
 * with {id, size_bytes, ...}; DELETE /files/{id}; GET /files/{id}/content for the bytes. Files have no purpose
 * there and do not expire.
 */
import type { FilesTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { malformedAnswer, withoutContentType } from '../shared/files.ts';
import { anthropicHeaders } from './chat.ts';
import { FILES_BETA } from './options.ts';

export { FILES_BETA };

const headers = (target: ProviderTarget) => withoutContentType(anthropicHeaders(target, [FILES_BETA]));

export const anthropicFiles: FilesTranslator = {
  upload(_file, target) {
    return { kind: 'multipart', request: { method: 'POST', path: '/files', headers: headers(target) }, fields: [], fileField: 'file' };
  },
  fromUpload(body, target) {
    const file = body as { id?: unknown; size_bytes?: unknown } | null;
    if (!file || typeof file.id !== 'string') throw malformedAnswer(target, 'upload answer (no file id)');
    return { id: file.id, ...(typeof file.size_bytes === 'number' ? { bytes: file.size_bytes } : {}), expiresAt: null };
  },
  delete(id, target) {
    return { method: 'DELETE', path: `/files/${encodeURIComponent(id)}`, headers: headers(target) };
  },
  // Anthropic serves the content only of files it marks downloadable (those skills or code execution created),
  // not of files uploaded to it: those answer an error, which the caller reports as a file it skipped.
  download(id, target) {
    return { method: 'GET', path: `/files/${encodeURIComponent(id)}/content`, headers: headers(target) };
  },
};
