/**
 * A streamGenerateContent?alt=sse stream -> canonical chunks. Each SSE event is a whole
 * GenerateContentResponse: text parts are deltas, function calls come whole, and usageMetadata is
 * cumulative, so only the last one counts; it goes out in a chunk of its own once the upstream closes.
 */
import type { ChatCompletionChunk, Usage } from '../../core/canonical/chat.ts';
import type { ChatStreamDecoder, ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { geminiError } from './errors.ts';
import { finishReason, logprobsFrom, malformed, readParts, usageFrom, type GenerateContentResponse } from './response.ts';

type Delta = ChatCompletionChunk['choices'][number]['delta'] & { reasoning_content?: string };

interface CandidateState {
  started: boolean;
  calls: number;
  finished: boolean;
}

export function geminiStreamDecoder(target: ProviderTarget): ChatStreamDecoder {
  const created = Math.floor(Date.now() / 1000);
  let id: string | undefined;
  let model = target.upstreamModel;
  let usage: Usage | undefined;
  let blocked = false;
  const candidates = new Map<number, CandidateState>();

  const chunk = (choices: ChatCompletionChunk['choices']): ChatCompletionChunk =>
    ({ id: id ?? `chatcmpl-${target.slug}`, object: 'chat.completion.chunk', created, model, choices });

  return {
    event(event) {
      if (event.data.trim() === '') return { chunks: [] };
      let parsed: unknown;
      try {
        parsed = JSON.parse(event.data);
      } catch {
        throw malformed(target, 'stream event');
      }
      const response = parsed as GenerateContentResponse & { error?: unknown };
      if (!response || typeof response !== 'object' || Array.isArray(response)) throw malformed(target, 'stream event');
      if (response.error) throw geminiError(target, undefined, response);
      id ??= response.responseId ? `chatcmpl-${response.responseId}` : `chatcmpl-${crypto.randomUUID()}`;
      if (response.modelVersion) model = response.modelVersion;
      usage = usageFrom(response.usageMetadata) ?? usage;
      if (response.promptFeedback?.blockReason) blocked = true;
      const chunks: ChatCompletionChunk[] = [];
      (response.candidates ?? []).forEach((candidate, position) => {
        const index = candidate.index ?? position;
        const state = candidates.get(index) ?? { started: false, calls: 0, finished: false };
        candidates.set(index, state);
        const read = readParts(candidate.content?.parts, state.calls, response.responseId && `${response.responseId}:${index}`);
        const delta: Delta = {};
        if (!state.started) delta.role = 'assistant';
        if (read.text) delta.content = read.text;
        if (read.reasoning) delta.reasoning_content = read.reasoning;
        if (read.toolCalls.length > 0) {
          delta.tool_calls = read.toolCalls.map((call, i) => ({ index: state.calls + i, id: call.id, type: 'function' as const, function: call.function }));
          state.calls += read.toolCalls.length;
        }
        const logprobs = logprobsFrom(candidate.logprobsResult);
        if (Object.keys(delta).length > 0 || logprobs) {
          chunks.push(chunk([{ index, delta, finish_reason: null, ...(logprobs ? { logprobs } : {}) }]));
        }
        state.started = true;
        const finish = finishReason(candidate.finishReason, state.calls > 0);
        if (finish && !state.finished) {
          state.finished = true;
          chunks.push(chunk([{ index, delta: {}, finish_reason: finish }]));
        }
      });
      return { chunks };
    },

    end() {
      const chunks: ChatCompletionChunk[] = [];
      if (candidates.size === 0 && blocked) {
        // A blocked prompt has no candidates: the caller gets an empty, filtered answer.
        chunks.push(chunk([{ index: 0, delta: { role: 'assistant' }, finish_reason: 'content_filter' }]));
      } else if (candidates.size === 0 || [...candidates.values()].some((c) => !c.finished)) {
        throw new GatewayError('UPSTREAM_ERROR', `${target.slug} ended the stream before the answer was finished`, { provider: target.slug });
      }
      if (usage) chunks.push({ ...chunk([]), usage });
      return chunks;
    },
  };
}
