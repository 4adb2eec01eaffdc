/**
 * POST /v1/responses on a provider with a native Responses API (core/dispatch/responses-call.ts): the body it
 * takes, and its answer read back as canonical chat for the plugins (usage, budgets) while the native Response
 * itself is kept for the record. A continuation names the provider's own previous response; the fallback body
 * carries the whole stored conversation instead, for a provider that no longer knows that response.
 */
import { GatewayError } from '../errors.ts';
import type { CanonicalChatRequest, ChatCompletion, FinishReason, ToolCall, Usage } from './chat.ts';
import type { InputItem } from './responses.ts';
import type { ResponsesCreateBody } from './responses-request.ts';

export interface NativeResponsesRequest {
  /** This turn as the provider takes it: the new input items, and previous_response_id its own id. */
  body: Record<string, unknown>;
  /** The whole conversation (the stored turns' items, then this input) without previous_response_id; null on a first turn. */
  fallback: Record<string, unknown> | null;
}

/** A stored turn as a native continuation reads it: its items and the provider's id of its answer. */
export interface NativeStoredTurn { input: unknown[]; output: unknown[]; providerResponseId: string | null }

/** What of a provider's Responses API decides whether a request can go there. */
export interface NativeResponsesSupport { builtInTools?: readonly string[] }

type Item = Record<string, unknown> & { type?: unknown };

/** How OpenAI's (and Azure's) Responses API names its responses. */
const NATIVE_RESPONSE_ID_PREFIX = 'resp_';

const hasFileId = (item: unknown) => {
  const content = (item as { content?: unknown } | null)?.content;
  return Array.isArray(content) && content.some((part: { file_id?: unknown } | null) => typeof part?.file_id === 'string');
};

/**
 * The native request of a create body, or null when only the chat path can serve it: a gateway file id (the
 * dispatcher resolves those for chat only), a built-in tool the provider does not run itself (file_search is the
 * gateway's), or a reasoning budget (the Responses API takes an effort only).
 */
export function nativeResponsesRequest(body: ResponsesCreateBody, input: InputItem[], chain: readonly NativeStoredTurn[], support: NativeResponsesSupport): NativeResponsesRequest | null {
  const builtIns = support.builtInTools ?? [];
  if ((body.tools ?? []).some((tool) => tool.type !== 'function' && !builtIns.includes(tool.type))) return null;
  if (body.reasoning?.budget_tokens !== undefined) return null;
  if (input.some(hasFileId) || chain.some((turn) => turn.input.some(hasFileId))) return null;

  const params: Record<string, unknown> = {};
  if (body.instructions) params.instructions = body.instructions;
  if (body.tools && body.tools.length > 0) params.tools = body.tools;
  for (const field of ['tool_choice', 'temperature', 'top_p', 'max_output_tokens'] as const) {
    if (body[field] !== undefined) params[field] = body[field];
  }
  if (body.reasoning) {
    const { effort, summary } = body.reasoning;
    params.reasoning = { ...(effort ? { effort } : {}), ...(summary !== undefined ? { summary } : {}) };
  }
  // Kept upstream when the gateway keeps it, so the next turn can name it; metadata stays the gateway's.
  params.store = body.store !== false;

  const previous = chain.at(-1);
  const fallback = previous ? { ...params, input: [...chain.flatMap((turn) => [...turn.input, ...turn.output].flatMap(replayItem)), ...input] } : null;
  // Only a turn the Responses API itself answered can be named upstream: a turn served through chat has a
  // chat completion's id (chatcmpl-...), which the provider would refuse; its conversation goes whole instead.
  if (previous && !previous.providerResponseId?.startsWith(NATIVE_RESPONSE_ID_PREFIX)) return { body: fallback!, fallback: null };
  return { body: { ...params, input, ...(previous ? { previous_response_id: previous.providerResponseId } : {}) }, fallback };
}

/**
 * A stored item as input for a provider that forgot it: messages, function calls and their outputs, without the
 * ids that name the provider's copies; reasoning and the provider's own tool items (web_search_call, ...) mean
 * nothing without its state and are left out.
 */
function replayItem(stored: unknown): Item[] {
  const item = stored as Item;
  switch (item.type ?? 'message') {
    case 'message': {
      const { role, content } = item as { role: string; content: unknown };
      if (role !== 'assistant' || !Array.isArray(content)) return [{ type: 'message', role, content }];
      const text = content.flatMap((part: { type?: unknown; text?: unknown }) => (part.type === 'output_text' && typeof part.text === 'string' ? [{ type: 'output_text', text: part.text }] : []));
      return text.length > 0 ? [{ type: 'message', role, content: text }] : [];
    }
    case 'function_call': return [{ type: 'function_call', call_id: item.call_id, name: item.name, arguments: item.arguments }];
    case 'function_call_output': return [{ type: 'function_call_output', call_id: item.call_id, output: item.output }];
    default: return [];
  }
}

/** The parts of OpenAI's Response object the gateway reads; the rest is kept as the provider sent it. */
export interface NativeResponse {
  id: string;
  model?: string;
  status?: string;
  created_at?: number;
  output: unknown[];
  usage?: NativeUsage | null;
  incomplete_details?: { reason?: string } | null;
  error?: { code?: string; message?: string } | null;
  [field: string]: unknown;
}

export interface NativeUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens?: number;
  input_tokens_details?: { cached_tokens?: number };
  output_tokens_details?: { reasoning_tokens?: number };
}

export function nativeResponseOf(value: unknown, provider: string): NativeResponse {
  const response = value as Partial<NativeResponse> | null;
  if (!response || typeof response !== 'object' || typeof response.id !== 'string' || !Array.isArray(response.output)) {
    throw new GatewayError('UPSTREAM_ERROR', `${provider} returned a Response that is not one (no id or output)`, { provider });
  }
  return response as NativeResponse;
}

/** The native usage as canonical usage, with the cached and reasoning details it reports. */
export function usageOfNative(usage: NativeUsage | null | undefined): Usage | undefined {
  if (!usage || typeof usage.input_tokens !== 'number' || typeof usage.output_tokens !== 'number') return undefined;
  const out: Usage = {
    prompt_tokens: usage.input_tokens, completion_tokens: usage.output_tokens,
    total_tokens: typeof usage.total_tokens === 'number' ? usage.total_tokens : usage.input_tokens + usage.output_tokens,
  };
  const cached = usage.input_tokens_details?.cached_tokens;
  const reasoning = usage.output_tokens_details?.reasoning_tokens;
  if (typeof cached === 'number') out.prompt_tokens_details = { cached_tokens: cached };
  if (typeof reasoning === 'number') out.completion_tokens_details = { reasoning_tokens: reasoning };
  return out;
}

/** An incomplete end by its reason (content_filter, else a length cut); otherwise calls or a stop. */
export function finishOfNative(response: Pick<NativeResponse, 'status' | 'incomplete_details'>, hasCalls: boolean): FinishReason {
  if (response.status === 'incomplete') return response.incomplete_details?.reason === 'content_filter' ? 'content_filter' : 'length';
  return hasCalls ? 'tool_calls' : 'stop';
}

/** A failed Response (status failed): its error, as the gateway's. */
export function failedNative(response: NativeResponse, provider: string): GatewayError {
  const message = response.error?.message ?? 'the response failed';
  return new GatewayError('UPSTREAM_ERROR', `${provider}: ${message}`, { provider, upstreamError: response.error ?? null });
}

/** The native Response as a canonical chat answer: its text, its function calls, its end and usage. */
export function chatCompletionOfNative(response: NativeResponse, provider: string, fallbackModel: string): ChatCompletion {
  if (response.status === 'failed') throw failedNative(response, provider);
  let text = '';
  let refusal: string | undefined;
  const calls: ToolCall[] = [];
  for (const raw of response.output) {
    const item = raw as { type?: string; content?: unknown; call_id?: unknown; name?: unknown; arguments?: unknown };
    if (item.type === 'message' && Array.isArray(item.content)) {
      for (const part of item.content as Array<{ type?: string; text?: unknown; refusal?: unknown }>) {
        if (part.type === 'output_text' && typeof part.text === 'string') text += part.text;
        if (part.type === 'refusal' && typeof part.refusal === 'string') refusal = (refusal ?? '') + part.refusal;
      }
    } else if (item.type === 'function_call' && typeof item.call_id === 'string' && typeof item.name === 'string') {
      calls.push({ id: item.call_id, type: 'function', function: { name: item.name, arguments: typeof item.arguments === 'string' ? item.arguments : '' } });
    }
  }
  const completion: ChatCompletion = {
    id: response.id,
    object: 'chat.completion',
    created: typeof response.created_at === 'number' ? response.created_at : Math.floor(Date.now() / 1000),
    model: typeof response.model === 'string' ? response.model : fallbackModel,
    choices: [{
      index: 0,
      message: { role: 'assistant', content: text === '' && calls.length > 0 ? null : text, ...(calls.length > 0 ? { tool_calls: calls } : {}), ...(refusal !== undefined ? { refusal } : {}) },
      finish_reason: finishOfNative(response, calls.length > 0),
    }],
  };
  const usage = usageOfNative(response.usage);
  if (usage) completion.usage = usage;
  return completion;
}

/** The native Response that answered a request (set by the dispatcher, read by the Responses ingress). */
const nativeAnswers = new WeakMap<CanonicalChatRequest, NativeResponse>();

export function rememberNativeAnswer(request: CanonicalChatRequest, response: NativeResponse): void {
  nativeAnswers.set(request, response);
}

export function nativeAnswerOf(request: CanonicalChatRequest): NativeResponse | undefined {
  return nativeAnswers.get(request);
}
