/**
 * OpenAI's Files API (POST /files multipart with `purpose` and `file`; DELETE /files/{id}; GET
 * /files/{id}/content for the bytes), shared by Azure OpenAI, which serves the same API under its resource with an
 * api-version.
 */
import type { FilesTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { malformedAnswer, withoutContentType } from '../shared/files.ts';
import { openaiHeaders } from './chat.ts';

export interface OpenAiFilesHooks {
  /**
   * The path of the files collection, or of one file when `id` is given, then `sub` (`/content`) under that file
   * (query included, after all of it).
   */
  path(target: ProviderTarget, id?: string, sub?: string): string;
  headers(target: ProviderTarget): Record<string, string>;
}

export function createOpenAiFiles(hooks: OpenAiFilesHooks): FilesTranslator {
  return {
    upload(file, target) {
      return {
        kind: 'multipart',
        request: { method: 'POST', path: hooks.path(target), headers: withoutContentType(hooks.headers(target)) },
        fields: [['purpose', file.purpose]],
        fileField: 'file',
      };
    },
    fromUpload(body, target) {
      const file = body as { id?: unknown; bytes?: unknown; expires_at?: unknown } | null;
      if (!file || typeof file.id !== 'string') throw malformedAnswer(target, 'upload answer (no file id)');
      return {
        id: file.id,
        ...(typeof file.bytes === 'number' ? { bytes: file.bytes } : {}),
        expiresAt: typeof file.expires_at === 'number' ? file.expires_at * 1000 : null,
      };
    },
    delete(id, target) {
      return { method: 'DELETE', path: hooks.path(target, id), headers: withoutContentType(hooks.headers(target)) };
    },
    download(id, target) {
      return { method: 'GET', path: hooks.path(target, id, '/content'), headers: withoutContentType(hooks.headers(target)) };
    },
  };
}

export const openaiFiles = createOpenAiFiles({
  path: (_target, id, sub = '') => (id === undefined ? '/files' : `/files/${encodeURIComponent(id)}${sub}`),
  headers: openaiHeaders,
});
