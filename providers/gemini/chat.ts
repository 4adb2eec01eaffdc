/**
 * The generateContent translator. Gemini API and Vertex AI share the body, the answers and the stream; they
 * differ in the URL of a model and in the credential, which `GeminiEndpoint` supplies.
 */
import type { ChatTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { geminiRequestBody } from './request.ts';
import { geminiCompletion } from './response.ts';
import { geminiStreamDecoder } from './stream.ts';

export interface GeminiEndpoint {
  /** The path (under the base URL) of the model's resource, without the `:method` suffix. */
  modelPath(target: ProviderTarget): string;
  headers(target: ProviderTarget): Record<string, string>;
}

export function geminiChatTranslator(endpoint: GeminiEndpoint): ChatTranslator {
  return {
    toUpstream(request, target, stream) {
      const method = stream ? ':streamGenerateContent?alt=sse' : ':generateContent';
      return {
        method: 'POST',
        path: `${endpoint.modelPath(target)}${method}`,
        headers: endpoint.headers(target),
        body: JSON.stringify(geminiRequestBody(request, target.upstreamModel, target.slug)),
      };
    },
    fromUpstream: (body, target) => geminiCompletion(body, target),
    streamFormat: 'sse',
    streamDecoder: geminiStreamDecoder,
  };
}

/** `gemini-2.5-flash` -> /models/gemini-2.5-flash; `tunedModels/x` (or `models/x`) is used as given. */
export function generativeLanguageModelPath(target: ProviderTarget): string {
  const model = target.upstreamModel.includes('/') ? target.upstreamModel : `models/${target.upstreamModel}`;
  return `/${model.split('/').map(encodeURIComponent).join('/')}`;
}

export function geminiApiHeaders(target: ProviderTarget): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...target.headers };
  if (target.apiKey) headers['x-goog-api-key'] = target.apiKey;
  return headers;
}

export const geminiChat = geminiChatTranslator({ modelPath: generativeLanguageModelPath, headers: geminiApiHeaders });
