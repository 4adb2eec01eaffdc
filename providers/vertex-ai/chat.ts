/**
 * Chat on Vertex AI: Gemini models through generateContent (the Gemini translator), Claude models through
 * Anthropic's Messages body on rawPredict / streamRawPredict (the Anthropic translator's exports). The upstream
 * model name decides which: `claude-*` (or a publishers/anthropic/... path) is Claude.
 */
import type { ChatCompletionRequest } from '../../core/canonical/chat.ts';
import type { ChatTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { buildMessagesRequest, createMessagesStreamDecoder, parseMessagesResponse } from '../anthropic/index.ts';
import { geminiChatTranslator } from '../gemini/chat.ts';

export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

export function isClaude(target: ProviderTarget): boolean {
  return /^claude/i.test(target.upstreamModel) || target.upstreamModel.startsWith('publishers/anthropic/');
}

/**
 * The model's resource under the base URL (.../projects/{project}/locations/{location}). A name with a slash
 * is a resource path already (endpoints/123 for a tuned model, publishers/meta/models/...). `@` stays as is:
 * Claude versions are named model@date.
 */
export function modelPath(target: ProviderTarget, publisher: 'google' | 'anthropic'): string {
  const model = target.upstreamModel.includes('/') ? target.upstreamModel : `publishers/${publisher}/models/${target.upstreamModel}`;
  return `/${model.split('/').map((segment) => encodeURIComponent(segment).replace(/%40/g, '@')).join('/')}`;
}

/**
 * The global location is served by aiplatform.googleapis.com, without a location prefix: the default base URL
 * filled with location "global" names a host that does not exist, so such requests go to the real one.
 */
export function resolved(target: ProviderTarget, path: string): string {
  const base = new URL(target.baseUrl);
  if (base.hostname !== 'global-aiplatform.googleapis.com') return path;
  return `${base.protocol}//aiplatform.googleapis.com${base.pathname.replace(/\/+$/, '')}${path}`;
}

export function headers(target: ProviderTarget, betas: string[] = []): Record<string, string> {
  // The Bearer token is added by authorize (core runs it on every request).
  const all: Record<string, string> = { 'content-type': 'application/json', ...target.headers };
  if (betas.length > 0) all['anthropic-beta'] = [...new Set([...(all['anthropic-beta'] ?? '').split(','), ...betas].map((b) => b.trim()).filter((b) => b !== ''))].join(',');
  return all;
}

const gemini = geminiChatTranslator({
  modelPath: (target) => resolved(target, modelPath(target, 'google')),
  headers: (target) => headers(target),
});

/** What Claude cannot do although the provider (for its Gemini models) declares it: refused before any I/O. */
function refuseForClaude(request: ChatCompletionRequest, target: ProviderTarget): void {
  const refuse = (what: string, details: Record<string, unknown>) =>
    new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${target.slug} does not support ${what} for Claude models`, { provider: target.slug, ...details });
  if ((request.n ?? 1) > 1) throw refuse('n > 1 (several choices per request)', { capability: 'n' });
  const grounding = (request.tools ?? []).some((t) => t.type === 'built_in' && t.built_in === 'search_grounding');
  if (grounding) throw refuse('the built-in tool search_grounding', { tools: ['search_grounding'] });
}

const claude: ChatTranslator = {
  toUpstream(request, target, stream) {
    refuseForClaude(request, target);
    const { anthropicVersion } = target.options as { anthropicVersion?: string };
    const { body, betas } = buildMessagesRequest(request, target, stream, { includeModel: false, anthropicVersion: anthropicVersion || VERTEX_ANTHROPIC_VERSION });
    const method = stream ? ':streamRawPredict' : ':rawPredict';
    return { method: 'POST', path: resolved(target, `${modelPath(target, 'anthropic')}${method}`), headers: headers(target, betas), body: JSON.stringify(body) };
  },
  fromUpstream: parseMessagesResponse,
  streamFormat: 'sse',
  streamDecoder: createMessagesStreamDecoder,
};

export const vertexChat: ChatTranslator = {
  toUpstream: (request, target, stream) => (isClaude(target) ? claude : gemini).toUpstream(request, target, stream),
  fromUpstream: (body, target, request) => (isClaude(target) ? claude : gemini).fromUpstream(body, target, request),
  // Both wires stream server-sent events.
  streamFormat: 'sse',
  streamDecoder: (target, request) => (isClaude(target) ? claude : gemini).streamDecoder(target, request),
};
