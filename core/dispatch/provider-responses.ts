/**
 * The provider contract's native Responses part: a provider with its own Responses API (OpenAI's POST
 * /responses, Azure OpenAI's /openai/v1/responses) gets POST /v1/responses in that format, so a continuation names
 * the provider's own response (previous_response_id) instead of replaying the conversation. The gateway builds the
 * body (core/canonical/responses-native.ts) and reads the answer itself: the translator only places it.
 */
import type { GatewayError } from '../errors.ts';
import type { StreamFormat } from '../streaming/events.ts';
import type { ProviderTarget, UpstreamRequest } from './provider.ts';

export interface ResponsesTranslator {
  /**
   * A Responses create body (input items, instructions, tools, previous_response_id, ...) without `model` and
   * `stream` -> the request: the translator names the model (target.upstreamModel, or what stands for it) and
   * adds `stream: true` when streaming.
   */
  toUpstream(body: Record<string, unknown>, target: ProviderTarget, stream: boolean): UpstreamRequest;
  /** The framing of its streams (the events are OpenAI's Responses events). */
  streamFormat: StreamFormat;
  /**
   * Whether a mapped upstream error says the provider does not know the previous_response_id it was sent (it
   * expired or was deleted there): the gateway then sends the whole stored conversation once, without it.
   */
  forgotPrevious(error: GatewayError): boolean;
}

/** What a provider's native Responses API takes; the rest goes through its chat translator. */
export interface ResponsesCapability {
  stream: boolean;
  /** The Responses built-in tool types it runs itself (web_search, ...): passed as they are. */
  builtInTools?: string[];
}
