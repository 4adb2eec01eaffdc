/**
 * The legacy completion (POST /v1/completions with `prompt`). It stays a canonical chat request (the prompt is
 * one user message), so plugins estimate and meter it as chat; `legacy` carries what only the providers' native
 * completions API can honour. Per target the dispatcher picks that API (the provider declares `completion`) or
 * the chat one: the same request may be served natively by one target and through chat by the next.
 */
import type { CanonicalChatRequest, ChatCompletionRequest } from './chat.ts';

export interface LegacyCompletionFields {
  prompt: string;
  /** Text after the insertion point; absent when the caller sent none, null or "". */
  suffix?: string;
  echo?: boolean;
  /** Absent when the caller sent none or 1. */
  best_of?: number;
  /** The legacy integer: how many alternatives per token, with a logprobs object in the answer. */
  logprobs?: number;
}

/** The body of a native legacy completion, before the translator names the upstream model and the stream. */
export interface LegacyCompletionRequest {
  model: string;
  prompt: string;
  suffix?: string;
  echo?: boolean;
  best_of?: number;
  logprobs?: number;
  max_tokens?: number;
  /** Other parameters both APIs share (temperature, top_p, stop, penalties, logit_bias, seed, user, ...). */
  [extra: string]: unknown;
}

/** The legacy fields no chat API can honour: a target that lacks `completion` is skipped for them. */
export function nativeOnlyField(legacy: LegacyCompletionFields): 'suffix' | 'best_of' | 'logprobs' | undefined {
  if (legacy.suffix !== undefined) return 'suffix';
  if (legacy.best_of !== undefined) return 'best_of';
  if (legacy.logprobs !== undefined) return 'logprobs';
  return undefined;
}

/** Chat parameters the legacy API does not have: with one of them, a prompt goes through chat. */
const CHAT_ONLY = ['tools', 'tool_choice', 'parallel_tool_calls', 'response_format', 'reasoning_effort', 'reasoning', 'cache_control', 'logprobs', 'top_logprobs', 'modalities', 'audio', 'prediction'] as const;

export function chatOnlyField(body: ChatCompletionRequest): string | undefined {
  return CHAT_ONLY.find((key) => body[key] !== undefined && body[key] !== null);
}

/** The native body: the chat body without what is chat's (messages, n, the stream), plus the legacy fields. */
export function legacyRequestOf(request: CanonicalChatRequest, legacy: LegacyCompletionFields): LegacyCompletionRequest {
  const { messages: _messages, n: _n, stream: _stream, stream_options: _options, max_completion_tokens: maxCompletion, ...rest } = request.body;
  const shared: Record<string, unknown> = rest;
  for (const key of CHAT_ONLY) delete shared[key];
  // The legacy API names one limit: a caller's max_completion_tokens is it.
  if (shared.max_tokens === undefined && typeof maxCompletion === 'number') shared.max_tokens = maxCompletion;
  const { prompt, ...fields } = legacy;
  return { ...shared, ...fields, model: request.model, prompt };
}

/** The requests a native completions API answered: its text already holds the echo the caller asked for. */
const servedNatively = new WeakSet<CanonicalChatRequest>();

export function markServedNatively(request: CanonicalChatRequest): void {
  servedNatively.add(request);
}

export function isServedNatively(request: CanonicalChatRequest): boolean {
  return servedNatively.has(request);
}
