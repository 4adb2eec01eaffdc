/**
 * Azure OpenAI's Batch API: OpenAI's, under the resource (`/batches/{id}?api-version=`), with the api-key
 * header; its output and error files come through its files API. Polled only: a batch made on Azure (whose input
 * lines name deployments and whose endpoint values lack OpenAI's `/v1`) is registered by its id.
 */
import { createOpenAiBatches } from '../openai/batches.ts';
import { AZURE_OPENAI_API_VERSION, azureOpenAiHeaders } from './chat.ts';

export const azureOpenAiBatches = createOpenAiBatches({
  path(target, ...parts) {
    const version = (target.options as { apiVersion?: string }).apiVersion ?? AZURE_OPENAI_API_VERSION;
    return `/${parts.map(encodeURIComponent).join('/')}?api-version=${encodeURIComponent(version)}`;
  },
  headers: azureOpenAiHeaders,
});
