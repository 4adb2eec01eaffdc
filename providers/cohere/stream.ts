/**
 * Cohere v2 chat stream events -> canonical chunks. Each SSE event names its type both as the `event:` field
 * and as `type` in its data; the data is what is read. Text comes in content-delta; tool calls open with
 * tool-call-start (id, name) and their arguments arrive in tool-call-delta fragments; message-end carries the
 * finish reason and usage. tool-plan-delta (Cohere's narration before calling tools), thinking content,
 * citations and debug events are not part of the answer's text and are dropped.
 */
import type { ChatCompletionChunk, ChunkToolCallDelta } from '../../core/canonical/chat.ts';
import type { ChatStreamDecoder, ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { cohereError } from './errors.ts';
import { finishReason, malformed, usageOf } from './response.ts';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

interface CohereEvent {
  type?: string;
  id?: string;
  index?: number;
  delta?: {
    message?: {
      content?: { type?: string; text?: unknown };
      tool_calls?: CohereToolCall | CohereToolCall[];
    };
    finish_reason?: string;
    usage?: unknown;
  };
  message?: unknown;
}

interface CohereToolCall { id?: unknown; function?: { name?: unknown; arguments?: unknown } }

/** One tool call per event; some servers wrap it in a one-element array. */
const toolCallOf = (e: CohereEvent): CohereToolCall | undefined => {
  const calls = e.delta?.message?.tool_calls;
  return Array.isArray(calls) ? calls[0] : calls;
};

export function cohereStreamDecoder(target: ProviderTarget): ChatStreamDecoder {
  const created = Math.floor(Date.now() / 1000);
  let id = `chatcmpl-${target.slug}`;
  let finished = false;
  let toolCalls = 0;
  /** Cohere's tool-call index -> the canonical one (they agree today; the map keeps them apart if not). */
  const indexes = new Map<number, number>();

  const chunk = (delta: Delta, finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null): ChatCompletionChunk => ({
    id, object: 'chat.completion.chunk', created, model: target.upstreamModel, choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const toolChunk = (call: ChunkToolCallDelta) => chunk({ tool_calls: [call] });

  return {
    event(event) {
      const data = event.data.trim();
      if (data === '') return { chunks: [] };
      if (data === '[DONE]') return { chunks: [], done: true };
      let e: CohereEvent;
      try {
        e = JSON.parse(data) as CohereEvent;
      } catch {
        throw malformed(target, 'stream event');
      }
      if (!e || typeof e !== 'object') throw malformed(target, 'stream event');
      const type = e.type ?? event.event;
      switch (type) {
        case 'message-start':
          if (typeof e.id === 'string') id = e.id;
          return { chunks: [chunk({ role: 'assistant', content: '' })] };
        case 'content-start':
        case 'content-delta': {
          const content = e.delta?.message?.content;
          // A thinking part carries `thinking`, not `text`: reasoning stays out of the answer.
          const text = content?.type === undefined || content.type === 'text' ? content?.text : undefined;
          return { chunks: typeof text === 'string' && text !== '' ? [chunk({ content: text })] : [] };
        }
        case 'tool-call-start': {
          const call = toolCallOf(e);
          if (typeof call?.function?.name !== 'string') throw malformed(target, 'tool-call-start event');
          const index = toolCalls++;
          indexes.set(e.index ?? index, index);
          const args = typeof call.function.arguments === 'string' ? call.function.arguments : '';
          return { chunks: [toolChunk({ index, id: typeof call.id === 'string' ? call.id : `call_${index}`, type: 'function', function: { name: call.function.name, arguments: args } })] };
        }
        case 'tool-call-delta': {
          const args = toolCallOf(e)?.function?.arguments;
          const index = indexes.get(e.index ?? toolCalls - 1) ?? toolCalls - 1;
          if (index < 0) throw malformed(target, 'tool-call-delta event (no tool call started)');
          return { chunks: typeof args === 'string' && args !== '' ? [toolChunk({ index, function: { arguments: args } })] : [] };
        }
        case 'message-end': {
          finished = true;
          const finish = finishReason(e.delta?.finish_reason, toolCalls > 0, target);
          const chunks = [chunk({}, finish)];
          const usage = usageOf(e.delta?.usage);
          if (usage) chunks.push({ id, object: 'chat.completion.chunk', created, model: target.upstreamModel, choices: [], usage });
          return { chunks, done: true };
        }
        case 'error':
          throw cohereError(target, 502, e);
        default:
          // An error object in the stream has no type, only a message.
          if (type === 'message' && typeof e.message === 'string') throw cohereError(target, 502, e);
          return { chunks: [] }; // content-end, tool-call-end, tool-plan-delta, citation-*, debug, and what comes next
      }
    },
    end() {
      if (!finished) throw new GatewayError('UPSTREAM_ERROR', `${target.slug}'s stream ended before message-end`, { provider: target.slug });
      return [];
    },
  };
}
