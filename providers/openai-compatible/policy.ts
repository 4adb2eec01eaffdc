/**
 * The parameter policy every catalogue entry declares as data: what a provider refuses, drops or renames,
 * how it takes reasoning, and how its answers differ (finish reasons). One function per concern, each small,
 * so that an entry's quirks read as a list rather than as a copy of the translator.
 */
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, FinishReason } from '../../core/canonical/chat.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';

/**
 * How a provider takes the spec's `reasoning_effort` / `reasoning {effort, budget_tokens}`:
 * - `effort`: `reasoning_effort` low|medium|high (minimal becomes low where the provider has no minimal);
 * - `openrouter`: OpenRouter's `reasoning {effort, max_tokens, exclude}`;
 * - `thinking`: `thinking {type: enabled|disabled}` (DeepSeek, Zhipu, Volcengine; `minimal` is disabled, the
 *   closest these switches come), plus `reasoning_effort` when `keepEffort` says the provider takes both;
 * - `enable-thinking`: `enable_thinking` + `thinking_budget` (Qwen on DashScope, SiliconFlow);
 * - `prompt-mode`: Mistral's `prompt_mode: reasoning`;
 * - `none`: the provider has no reasoning switch; the hint is dropped.
 */
export type ReasoningStyle =
  | { style: 'effort'; minimal?: boolean }
  | { style: 'openrouter' }
  | { style: 'thinking'; keepEffort?: boolean }
  | { style: 'enable-thinking' }
  | { style: 'prompt-mode' }
  | { style: 'none' };

export interface ParameterPolicy {
  /** Parameters the provider lacks and whose absence would change the answer: 400 CAPABILITY_NOT_SUPPORTED. */
  refuse?: readonly string[];
  /** Parameters the provider rejects or ignores and that are safe to leave out (hints, metadata). */
  drop?: readonly string[];
  /** For providers that reject unknown fields: the only top-level fields sent. */
  allow?: readonly string[];
  /** Parameter renames, caller's name -> provider's. */
  rename?: Readonly<Record<string, string>>;
  /** The provider takes `max_completion_tokens` (default: it is sent as `max_tokens`, which all of them take). */
  maxCompletionTokens?: boolean;
  /** The provider has no json_schema response format (only json_object): refused. */
  noJsonSchema?: boolean;
  reasoning?: ReasoningStyle;
}

/** A parameter the caller actually used: not absent, null, false, '' or empty. */
const present = (value: unknown) =>
  value !== undefined && value !== null && value !== false && value !== ''
  && !(Array.isArray(value) && value.length === 0)
  && !(typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0);

/** The compatible hosts' one refusal: 400 CAPABILITY_NOT_SUPPORTED naming the provider and what it lacks. */
export function refused(target: ProviderTarget, what: string, details: Record<string, unknown>): GatewayError {
  return new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${target.slug} does not support ${what}`, { provider: target.slug, ...details });
}

/** Refusals, checked on the caller's request before anything is built. */
export function checkRefusals(policy: ParameterPolicy, request: ChatCompletionRequest, target: ProviderTarget): void {
  const asked = (policy.refuse ?? []).filter((name) => present(request[name]));
  if (asked.length > 0) throw refused(target, `the parameter${asked.length > 1 ? 's' : ''} ${asked.join(', ')}`, { parameters: asked });
  if (policy.noJsonSchema && request.response_format?.type === 'json_schema') {
    throw refused(target, 'json_schema response formats (only json_object)', { parameters: ['response_format'] });
  }
}

function effortOf(request: ChatCompletionRequest): string | undefined {
  return request.reasoning_effort ?? request.reasoning?.effort;
}

/** Writes the provider's native reasoning parameter; `reasoning` itself never leaves the gateway. */
export function applyReasoning(style: ReasoningStyle, body: Record<string, unknown>, request: ChatCompletionRequest): void {
  const effort = effortOf(request);
  const budget = request.reasoning?.budget_tokens;
  delete body.reasoning_effort;
  if (effort === undefined && budget === undefined) return;
  const off = effort === 'minimal';
  const lowFloor = effort === 'minimal' ? 'low' : effort;
  switch (style.style) {
    case 'effort':
      if (effort) body.reasoning_effort = style.minimal ? effort : lowFloor;
      return;
    case 'openrouter': {
      const reasoning: Record<string, unknown> = {};
      if (effort) reasoning.effort = effort;
      if (budget !== undefined) reasoning.max_tokens = budget;
      if (request.reasoning?.exclude_from_output) reasoning.exclude = true;
      body.reasoning = reasoning;
      return;
    }
    case 'thinking':
      body.thinking = { type: off ? 'disabled' : 'enabled' };
      if (style.keepEffort && effort && !off) body.reasoning_effort = lowFloor;
      return;
    case 'enable-thinking':
      body.enable_thinking = !off;
      if (budget !== undefined && !off) body.thinking_budget = budget;
      return;
    case 'prompt-mode':
      if (!off) body.prompt_mode = 'reasoning';
      return;
    case 'none':
      return;
  }
}

/** The body after the common OpenAI translation -> the provider's: renames, drops, the allow-list. */
export function shapeBody(policy: ParameterPolicy, body: Record<string, unknown>): void {
  // An empty stop list means none; some servers (Mistral) reject the empty array.
  if (Array.isArray(body.stop) && body.stop.length === 0) delete body.stop;
  if (!policy.maxCompletionTokens && body.max_completion_tokens !== undefined) {
    body.max_tokens = body.max_completion_tokens;
    delete body.max_completion_tokens;
  }
  for (const [from, to] of Object.entries(policy.rename ?? {})) {
    if (body[from] === undefined) continue;
    body[to] = body[from];
    delete body[from];
  }
  for (const name of policy.drop ?? []) delete body[name];
  if (policy.allow) for (const name of Object.keys(body)) if (!policy.allow.includes(name)) delete body[name];
}

/** Finish reasons some servers of the family use for the canonical ones (vLLM/TGI `eos`, Zhipu `sensitive`, ...). */
const FINISH_ALIASES: Readonly<Record<string, FinishReason>> = {
  eos: 'stop', eos_token: 'stop', end_turn: 'stop', stop_sequence: 'stop',
  max_tokens: 'length', model_length: 'length',
  tool_call: 'tool_calls', tool_use: 'tool_calls',
  sensitive: 'content_filter', content_filtered: 'content_filter',
};

export function canonicalFinish(reason: string | null): FinishReason | null {
  if (reason === null || reason === undefined) return null;
  return FINISH_ALIASES[reason] ?? (reason as FinishReason);
}

/** Reasoning text the provider returned beside the answer, removed when the caller asked to exclude it. */
const REASONING_FIELDS = ['reasoning_content', 'reasoning'] as const;

export function normalizeCompletion(completion: ChatCompletion, request: ChatCompletionRequest): void {
  for (const choice of completion.choices) {
    choice.finish_reason = canonicalFinish(choice.finish_reason);
    if (request.reasoning?.exclude_from_output) for (const f of REASONING_FIELDS) delete (choice.message as Record<string, unknown>)[f];
  }
}

export function normalizeChunk(chunk: ChatCompletionChunk, request: ChatCompletionRequest): void {
  for (const choice of chunk.choices) {
    choice.finish_reason = canonicalFinish(choice.finish_reason ?? null);
    if (request.reasoning?.exclude_from_output) for (const f of REASONING_FIELDS) delete (choice.delta as Record<string, unknown>)[f];
  }
}
