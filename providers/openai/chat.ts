/**
 * Chat in the OpenAI wire format, which is also the canonical one: the translation is mostly bookkeeping.
 * `createOpenAiChat` is the family's one translator: OpenAI uses it as is, and OpenAI-compatible providers
 * (providers/openai-compatible/, providers/azure-openai/) pass small hooks for what they do differently.
 */
import type { BuiltInTool, ChatCompletion, ChatCompletionChunk, ChatCompletionRequest } from '../../core/canonical/chat.ts';
import type { ChatTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { openaiErrorFromBody } from './errors.ts';
import { openAiStreamDecoder } from './stream.ts';

/** Gateway-level parameters that are not OpenAI's and must not reach it. */
const GATEWAY_ONLY = ['reasoning', 'cache_control'] as const;

export function openaiHeaders(target: ProviderTarget): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...target.headers };
  if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
  const { organization, project } = target.options as { organization?: string; project?: string };
  if (organization) headers['openai-organization'] = organization;
  if (project) headers['openai-project'] = project;
  return headers;
}

/** What a provider of the family does differently from OpenAI; every hook is optional. */
export interface OpenAiChatHooks {
  /** The request path under the base URL, query included (default `/chat/completions`). */
  path?(target: ProviderTarget): string;
  /** The request headers, credential included (default: Bearer and OpenAI's organization/project). */
  headers?(target: ProviderTarget): Record<string, string>;
  /**
   * Adjusts the outgoing body in place, after the common translation. Throws a GatewayError
   * (CAPABILITY_NOT_SUPPORTED) for a parameter the provider cannot honour: that is still before any I/O.
   */
  body?(body: Record<string, unknown>, request: ChatCompletionRequest, target: ProviderTarget, stream: boolean): void;
  /** Whether the provider takes `stream_options.include_usage` (default true); without it, usage comes unasked. */
  streamOptions?: boolean;
  /** Adjusts a parsed completion in place. */
  completion?(completion: ChatCompletion, request: ChatCompletionRequest): void;
  /** Adjusts a parsed stream chunk; null drops it. */
  chunk?(chunk: ChatCompletionChunk, request: ChatCompletionRequest): ChatCompletionChunk | null;
  /** The provider's error body -> gateway error (default: OpenAI's `{error: {message}}`). */
  error?(target: ProviderTarget, status: number, body: unknown): GatewayError;
}

export function toOpenAiBody(request: ChatCompletionRequest, target: ProviderTarget, stream: boolean, streamOptions = true): Record<string, unknown> {
  const body: Record<string, unknown> = { ...request, model: target.upstreamModel };
  for (const key of GATEWAY_ONLY) delete body[key];
  if (request.reasoning?.effort && request.reasoning_effort === undefined) body.reasoning_effort = request.reasoning.effort;
  if (request.tools?.some((t) => t.type === 'built_in')) {
    // web_search is OpenAI's web_search_options parameter (search-preview models), not a tool entry; the
    // dispatcher has refused every built-in this provider does not declare.
    const webSearch = request.tools.find((t): t is BuiltInTool => t.type === 'built_in' && t.built_in === 'web_search');
    if (webSearch) body.web_search_options = webSearch.config ?? {};
    const functions = request.tools.filter((t) => t.type === 'function');
    if (functions.length > 0) body.tools = functions;
    else delete body.tools;
  }
  delete body.stream_options;
  if (stream) {
    body.stream = true;
    // Usage at the end of every stream: asked for always, dropped again for callers who did not ask.
    if (streamOptions) body.stream_options = { ...(request.stream_options ?? {}), include_usage: true };
  } else {
    delete body.stream;
  }
  return body;
}

export function malformed(target: ProviderTarget, what: string): GatewayError {
  return new GatewayError('UPSTREAM_ERROR', `${target.slug} returned a malformed ${what}`, { provider: target.slug });
}

export function createOpenAiChat(hooks: OpenAiChatHooks = {}): ChatTranslator {
  const toError = hooks.error ?? openaiErrorFromBody;
  return {
    toUpstream(request, target, stream) {
      const body = toOpenAiBody(request, target, stream, hooks.streamOptions ?? true);
      hooks.body?.(body, request, target, stream);
      return {
        method: 'POST',
        path: hooks.path?.(target) ?? '/chat/completions',
        headers: hooks.headers?.(target) ?? openaiHeaders(target),
        body: JSON.stringify(body),
      };
    },

    fromUpstream(body, target, request) {
      const completion = body as ChatCompletion;
      if (!completion || typeof completion !== 'object' || !Array.isArray(completion.choices)) throw malformed(target, 'completion');
      hooks.completion?.(completion, request);
      return completion;
    },

    streamFormat: 'sse',

    streamDecoder(target, request) {
      return openAiStreamDecoder(target, request, { malformed, error: toError, ...(hooks.chunk ? { chunk: hooks.chunk } : {}) });
    },
  };
}

export const openaiChat: ChatTranslator = createOpenAiChat();
