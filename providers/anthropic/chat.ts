/** Chat on Anthropic's own Messages API: POST /messages with x-api-key, anthropic-version and anthropic-beta. */
import type { ChatTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { buildMessagesRequest } from './request.ts';
import { parseMessagesResponse } from './response.ts';
import { createMessagesStreamDecoder } from './stream.ts';

export const ANTHROPIC_VERSION = '2023-06-01';

export function anthropicHeaders(target: ProviderTarget, betas: string[]): Record<string, string> {
  const { anthropicVersion } = target.options as { anthropicVersion?: string };
  const headers: Record<string, string> = { 'content-type': 'application/json', ...target.headers };
  headers['anthropic-version'] = anthropicVersion || ANTHROPIC_VERSION;
  if (target.apiKey) headers['x-api-key'] = target.apiKey;
  // Betas from the operator's extra headers, the options and the request's tools: one comma-separated header.
  const all = new Set([...(headers['anthropic-beta'] ?? '').split(','), ...betas].map((b) => b.trim()).filter((b) => b !== ''));
  if (all.size > 0) headers['anthropic-beta'] = [...all].join(',');
  return headers;
}

export const anthropicChat: ChatTranslator = {
  toUpstream(request, target, stream) {
    const { body, betas } = buildMessagesRequest(request, target, stream);
    return { method: 'POST', path: '/messages', headers: anthropicHeaders(target, betas), body: JSON.stringify(body) };
  },
  fromUpstream: parseMessagesResponse,
  streamFormat: 'sse',
  streamDecoder: createMessagesStreamDecoder,
};
