/**
 * watsonx.ai chat: POST {base}/text/chat (JSON) or /text/chat_stream (SSE `event: message` chunks, the last one
 * carrying usage, no [DONE]). Answers are OpenAI-shaped with model_id beside model; what differs is mapped here:
 * finish reasons (time_limit, cancelled, error), reasoning_content (left out of the answer), error bodies.
 */
import type { ChatCompletion, ChatCompletionChunk, FinishReason, ToolCall, Usage } from '../../core/canonical/chat.ts';
import type { ChatTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { ChoiceEndings, cutShort } from '../openai/stream.ts';
import { watsonxError } from './errors.ts';
import { watsonxBody, type WatsonxOptions } from './request.ts';

/** The API version date every request names; the translator is written against this one. */
export const DEFAULT_VERSION = '2025-02-11';

const malformed = (target: ProviderTarget, what: string) =>
  new GatewayError('UPSTREAM_ERROR', `${target.slug} returned a malformed ${what}`, { provider: target.slug });

/**
 * time_limit is a cut like max_tokens; some models (gpt-oss) say stop after calling tools. An `error` finish is a
 * failed generation, not an ending.
 */
function finish(raw: unknown, hasToolCalls: boolean, target: ProviderTarget): FinishReason | null {
  if (raw === null || raw === undefined) return null;
  if (raw === 'error') throw new GatewayError('UPSTREAM_ERROR', `${target.slug}: the generation failed (finish_reason error)`, { provider: target.slug, upstreamError: { finish_reason: raw } });
  if (raw === 'time_limit') return 'length';
  if (raw === 'length' || raw === 'content_filter' || raw === 'tool_calls') return raw;
  return hasToolCalls ? 'tool_calls' : 'stop';
}

function usageOf(value: unknown): Usage | undefined {
  const u = value as { prompt_tokens?: unknown; completion_tokens?: unknown } | null | undefined;
  if (typeof u?.prompt_tokens !== 'number' || typeof u.completion_tokens !== 'number') return undefined;
  return { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, total_tokens: u.prompt_tokens + u.completion_tokens };
}

interface WatsonxChoice {
  index?: number;
  message?: { content?: unknown; tool_calls?: ToolCall[] };
  delta?: { role?: string; content?: unknown; tool_calls?: unknown[] };
  finish_reason?: unknown;
}
interface WatsonxAnswer { id?: unknown; model_id?: unknown; created?: unknown; choices?: WatsonxChoice[]; usage?: unknown; errors?: unknown }

const created = (a: WatsonxAnswer) => (typeof a.created === 'number' ? a.created : Math.floor(Date.now() / 1000));
const modelOf = (a: WatsonxAnswer, target: ProviderTarget) => (typeof a.model_id === 'string' ? a.model_id : target.upstreamModel);

function completion(body: unknown, target: ProviderTarget): ChatCompletion {
  const answer = body as WatsonxAnswer | null;
  if (!answer || typeof answer !== 'object' || !Array.isArray(answer.choices)) throw malformed(target, 'chat answer');
  const result: ChatCompletion = {
    id: typeof answer.id === 'string' ? answer.id : `chatcmpl-${target.slug}`,
    object: 'chat.completion',
    created: created(answer),
    model: modelOf(answer, target),
    choices: answer.choices.map((c, i) => {
      const calls = Array.isArray(c.message?.tool_calls) && c.message.tool_calls.length > 0 ? c.message.tool_calls : undefined;
      const content = typeof c.message?.content === 'string' ? c.message.content : null;
      return {
        index: c.index ?? i,
        message: { role: 'assistant' as const, content: calls && !content ? null : content ?? '', ...(calls ? { tool_calls: calls } : {}) },
        finish_reason: finish(c.finish_reason, !!calls, target) ?? (calls ? 'tool_calls' : 'stop'),
      };
    }),
  };
  const usage = usageOf(answer.usage);
  if (usage) result.usage = usage;
  return result;
}

export const watsonxChat: ChatTranslator = {
  toUpstream(request, target, stream) {
    const version = (target.options as WatsonxOptions).version ?? DEFAULT_VERSION;
    return {
      method: 'POST',
      path: `/text/${stream ? 'chat_stream' : 'chat'}?version=${encodeURIComponent(version)}`,
      // authorize() adds the IAM bearer token.
      headers: { ...target.headers, 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' },
      body: JSON.stringify(watsonxBody(request, target)),
    };
  },

  fromUpstream: (body, target) => completion(body, target),

  streamFormat: 'sse',

  streamDecoder(target) {
    const calledTools = new Set<number>();
    // watsonx sends no [DONE]: a stream is whole once every choice has its finish reason (providers/openai/stream.ts).
    const endings = new ChoiceEndings();
    let done = false;
    return {
      event(event) {
        const data = event.data.trim();
        if (data === '') return { chunks: [] };
        if (data === '[DONE]') {
          done = true;
          return { chunks: [], done: true };
        }
        let value: WatsonxAnswer;
        try {
          value = JSON.parse(data) as WatsonxAnswer;
        } catch {
          throw malformed(target, 'stream event');
        }
        if (!value || typeof value !== 'object') throw malformed(target, 'stream event');
        if (value.errors || event.event === 'error') throw watsonxError(target, 502, value);
        const base = { id: typeof value.id === 'string' ? value.id : `chatcmpl-${target.slug}`, object: 'chat.completion.chunk' as const, created: created(value), model: modelOf(value, target) };
        const chunks: ChatCompletionChunk[] = [];
        const choices = (Array.isArray(value.choices) ? value.choices : []).map((c, i) => {
          const index = c.index ?? i;
          const delta: ChatCompletionChunk['choices'][number]['delta'] = {};
          if (c.delta?.role === 'assistant') delta.role = 'assistant';
          // reasoning_content is the model's thinking, not its answer.
          if (typeof c.delta?.content === 'string') delta.content = c.delta.content;
          if (Array.isArray(c.delta?.tool_calls) && c.delta.tool_calls.length > 0) {
            delta.tool_calls = c.delta.tool_calls as NonNullable<typeof delta.tool_calls>;
            calledTools.add(index);
          }
          return { index, delta, finish_reason: finish(c.finish_reason, calledTools.has(index), target) };
        });
        endings.see(choices);
        if (choices.length > 0) chunks.push({ ...base, choices });
        const usage = usageOf(value.usage);
        if (usage) chunks.push({ ...base, choices: [], usage });
        return { chunks };
      },
      end() {
        if (done || endings.complete) return [];
        throw cutShort(target, 'every choice had its finish reason');
      },
    };
  },
};
