/**
 * Azure's two OpenAI-shaped chat APIs, on the OpenAI translator:
 * - Azure OpenAI: the deployment is in the path (`/deployments/{deployment}/chat/completions?api-version=`),
 *   the key in `api-key`; the body's model is not used (the deployment decides).
 * - Azure AI model inference (Foundry, `*.services.ai.azure.com/models`): `/chat/completions?api-version=`
 *   with the model in the body, the key in `api-key` or as a Bearer token.
 * Both add content-filter annotations: `finish_reason: content_filter` passes through as is, and the stream's
 * first chunk, which carries only `prompt_filter_results` (no choices, no usage), is dropped.
 */
import type { ChatCompletionChunk } from '../../core/canonical/chat.ts';
import type { ChatTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { createOpenAiChat } from '../openai/chat.ts';

export const AZURE_OPENAI_API_VERSION = '2024-10-21';
export const AZURE_AI_API_VERSION = '2024-05-01-preview';

interface AzureOpenAiOptions { apiVersion?: string; deployments?: Record<string, string> }
interface AzureAiOptions { apiVersion?: string; auth?: 'api-key' | 'bearer'; extraParameters?: 'pass-through' | 'drop' | 'error' }

/** The deployment serving a target: an explicit mapping of the upstream model, else the model name itself. */
export function azureDeployment(target: ProviderTarget): string {
  const { deployments } = target.options as AzureOpenAiOptions;
  return deployments?.[target.upstreamModel] ?? target.upstreamModel;
}

/** Azure OpenAI's path for an operation (chat/completions, completions, embeddings): the deployment's, versioned. */
export function azureOpenAiPath(target: ProviderTarget, operation: string): string {
  const version = (target.options as AzureOpenAiOptions).apiVersion ?? AZURE_OPENAI_API_VERSION;
  return `/deployments/${encodeURIComponent(azureDeployment(target))}/${operation}?api-version=${encodeURIComponent(version)}`;
}

/** The model inference API's path for an operation: the model is named in the body, not the path. */
export function azureAiPath(target: ProviderTarget, operation: string): string {
  const version = (target.options as AzureAiOptions).apiVersion ?? AZURE_AI_API_VERSION;
  return `/${operation}?api-version=${encodeURIComponent(version)}`;
}

function baseHeaders(target: ProviderTarget): Record<string, string> {
  return { 'content-type': 'application/json', ...target.headers };
}

/** A chunk Azure sends before the answer with only the prompt's filter results: nothing for the caller. */
function dropFilterOnlyChunk(chunk: ChatCompletionChunk): ChatCompletionChunk | null {
  return chunk.choices.length === 0 && !chunk.usage ? null : chunk;
}

export function azureOpenAiHeaders(target: ProviderTarget): Record<string, string> {
  const headers = baseHeaders(target);
  if (target.apiKey) headers['api-key'] = target.apiKey;
  return headers;
}

export function azureAiHeaders(target: ProviderTarget): Record<string, string> {
  const { auth, extraParameters } = target.options as AzureAiOptions;
  const headers = baseHeaders(target);
  if (target.apiKey) {
    if (auth === 'bearer') headers.authorization = `Bearer ${target.apiKey}`;
    else headers['api-key'] = target.apiKey;
  }
  if (extraParameters) headers['extra-parameters'] = extraParameters;
  return headers;
}

export const azureOpenAiChat: ChatTranslator = createOpenAiChat({
  path: (target) => azureOpenAiPath(target, 'chat/completions'),
  headers: azureOpenAiHeaders,
  body(body) {
    delete body.model;
  },
  chunk: dropFilterOnlyChunk,
});

export const azureAiChat: ChatTranslator = createOpenAiChat({
  path: (target) => azureAiPath(target, 'chat/completions'),
  headers: azureAiHeaders,
  chunk: dropFilterOnlyChunk,
});
