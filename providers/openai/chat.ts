/** Chat in the OpenAI wire format, which is also the canonical one: the translation is mostly bookkeeping. */
import type { BuiltInTool, ChatCompletion, ChatCompletionChunk, ChatCompletionRequest } from '../../core/canonical/chat.ts';
import type { ChatTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { openaiErrorFromBody } from './errors.ts';

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

function toOpenAiBody(request: ChatCompletionRequest, target: ProviderTarget, stream: boolean): Record<string, unknown> {
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
  if (stream) {
    body.stream = true;
    // Usage at the end of every stream: asked for always, dropped again for callers who did not ask.
    body.stream_options = { ...(request.stream_options ?? {}), include_usage: true };
  } else {
    delete body.stream;
    delete body.stream_options;
  }
  return body;
}

function malformed(target: ProviderTarget, what: string): GatewayError {
  return new GatewayError('UPSTREAM_ERROR', `${target.slug} returned a malformed ${what}`, { provider: target.slug });
}

export const openaiChat: ChatTranslator = {
  toUpstream(request, target, stream) {
    return { method: 'POST', path: '/chat/completions', headers: openaiHeaders(target), body: JSON.stringify(toOpenAiBody(request, target, stream)) };
  },

  fromUpstream(body, target) {
    const completion = body as ChatCompletion;
    if (!completion || typeof completion !== 'object' || !Array.isArray(completion.choices)) throw malformed(target, 'completion');
    return completion;
  },

  streamFormat: 'sse',

  streamDecoder(target) {
    return {
      event(event) {
        if (event.data === '[DONE]') return { chunks: [], done: true };
        if (event.data === '') return { chunks: [] };
        let parsed: unknown;
        try {
          parsed = JSON.parse(event.data);
        } catch {
          throw malformed(target, 'stream event');
        }
        const value = parsed as ChatCompletionChunk & { error?: unknown };
        if (value.error) throw openaiErrorFromBody(target, 502, value);
        if (!Array.isArray(value.choices)) throw malformed(target, 'stream chunk');
        return { chunks: [value] };
      },
      end() {
        return [];
      },
    };
  },
};
