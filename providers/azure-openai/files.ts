/**
 * Azure OpenAI's Files API: OpenAI's, under the resource (`/files?api-version=`, the bytes at
 * `/files/{id}/content?api-version=`), with the api-key header.
 */
import { createOpenAiFiles } from '../openai/files.ts';
import { AZURE_OPENAI_API_VERSION, azureOpenAiHeaders } from './chat.ts';

export const azureOpenAiFiles = createOpenAiFiles({
  path(target, id, sub = '') {
    const version = (target.options as { apiVersion?: string }).apiVersion ?? AZURE_OPENAI_API_VERSION;
    return `/files${id === undefined ? '' : `/${encodeURIComponent(id)}${sub}`}?api-version=${encodeURIComponent(version)}`;
  },
  headers: azureOpenAiHeaders,
});
