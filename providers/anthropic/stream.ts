/**
 * The Messages API's named SSE events -> canonical chunks. Tool calls are numbered by their ordinal among
 * tool_use blocks (canonical indexes count tool calls, Anthropic's count every content block); the finish
 * reason and usage go out at message_stop, usage last in a chunk of its own, as OpenAI streams it.
 */
import type { ChatCompletionChunk, ChatCompletionRequest, ChunkToolCallDelta } from '../../core/canonical/chat.ts';
import type { ChatStreamDecoder, ProviderTarget, StreamEvent } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { anthropicEventError, malformed } from './errors.ts';
import { messagesSettings } from './options.ts';
import { jsonOutputTool } from './request.ts';
import { canonicalUsage, finishReason, showsReasoning, type MessagesUsage } from './response.ts';

/** What a content block becomes: text, a tool call, the response_format stand-in (its input is the text), thinking, or nothing. */
type BlockState =
  | { kind: 'text' | 'thinking' | 'other' }
  | { kind: 'json'; wrote: boolean }
  | { kind: 'tool'; ordinal: number; wrote: boolean };

type Delta = ChatCompletionChunk['choices'][number]['delta'] & { reasoning_content?: string };

interface Event {
  type?: string;
  index?: number;
  message?: { id?: unknown; model?: unknown; usage?: MessagesUsage };
  content_block?: { type?: string; id?: string; name?: string; text?: string; thinking?: string };
  delta?: { type?: string; text?: string; partial_json?: string; thinking?: string; stop_reason?: unknown };
  usage?: MessagesUsage;
}

export function createMessagesStreamDecoder(target: ProviderTarget, request: ChatCompletionRequest): ChatStreamDecoder {
  const json = jsonOutputTool(request, messagesSettings(target.options));
  const reasoningShown = showsReasoning(request);
  const created = Math.floor(Date.now() / 1000);
  const blocks = new Map<number, BlockState>();
  let id = `msg-${target.slug}`;
  let model = target.upstreamModel;
  let usage: MessagesUsage = {};
  let stopReason: unknown = null;
  let toolCount = 0;
  let finished = false;

  const chunk = (delta: Delta): ChatCompletionChunk => ({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: null }] });
  const toolDelta = (call: ChunkToolCallDelta) => chunk({ tool_calls: [call] });
  const last = (): ChatCompletionChunk[] => {
    finished = true;
    return [
      { id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta: {}, finish_reason: finishReason(stopReason, toolCount > 0) }] },
      { id, object: 'chat.completion.chunk', created, model, choices: [], usage: canonicalUsage(usage) },
    ];
  };

  function blockStart(index: number, block: NonNullable<Event['content_block']>): ChatCompletionChunk[] {
    if (block.type === 'text') {
      blocks.set(index, { kind: 'text' });
      return block.text ? [chunk({ content: block.text })] : [];
    }
    if (block.type === 'thinking') {
      blocks.set(index, { kind: 'thinking' });
      return block.thinking && reasoningShown ? [chunk({ reasoning_content: block.thinking })] : [];
    }
    if (block.type === 'tool_use') {
      if (typeof block.id !== 'string' || typeof block.name !== 'string') throw malformed(target, 'tool_use block');
      if (json && block.name === json.name) {
        blocks.set(index, { kind: 'json', wrote: false });
        return [];
      }
      const ordinal = toolCount++;
      blocks.set(index, { kind: 'tool', ordinal, wrote: false });
      return [toolDelta({ index: ordinal, id: block.id, type: 'function', function: { name: block.name, arguments: '' } })];
    }
    // server_tool_use, its results, redacted_thinking: run or kept by Anthropic, nothing for the caller.
    blocks.set(index, { kind: 'other' });
    return [];
  }

  function blockDelta(state: BlockState | undefined, delta: NonNullable<Event['delta']>): ChatCompletionChunk[] {
    if (!state) throw malformed(target, 'stream (a delta for a block that never started)');
    if (delta.type === 'text_delta' && state.kind === 'text' && delta.text) return [chunk({ content: delta.text })];
    if (delta.type === 'thinking_delta' && state.kind === 'thinking' && delta.thinking && reasoningShown) return [chunk({ reasoning_content: delta.thinking })];
    if (delta.type === 'input_json_delta' && delta.partial_json) {
      if (state.kind === 'json') {
        state.wrote = true;
        return [chunk({ content: delta.partial_json })];
      }
      if (state.kind === 'tool') {
        state.wrote = true;
        return [toolDelta({ index: state.ordinal, function: { arguments: delta.partial_json } })];
      }
    }
    // signature_delta, citations_delta, and server tools' input: nothing for the caller.
    return [];
  }

  /** A tool called with no input streams no input_json_delta at all: its arguments are still a JSON object. */
  function blockStop(state: BlockState | undefined): ChatCompletionChunk[] {
    if (state?.kind === 'tool' && !state.wrote) return [toolDelta({ index: state.ordinal, function: { arguments: '{}' } })];
    if (state?.kind === 'json' && !state.wrote) return [chunk({ content: '{}' })];
    return [];
  }

  return {
    event(event: StreamEvent) {
      if (finished || event.data === '') return { chunks: [] };
      let parsed: Event;
      try {
        parsed = JSON.parse(event.data) as Event;
      } catch {
        throw malformed(target, 'stream event');
      }
      if (!parsed || typeof parsed !== 'object') throw malformed(target, 'stream event');
      const index = typeof parsed.index === 'number' ? parsed.index : -1;
      switch (parsed.type ?? event.event) {
        case 'message_start': {
          const message = parsed.message ?? {};
          if (typeof message.id === 'string') id = message.id;
          if (typeof message.model === 'string') model = message.model;
          usage = { ...(message.usage ?? {}) };
          return { chunks: [chunk({ role: 'assistant', content: '' })] };
        }
        case 'content_block_start':
          if (!parsed.content_block) throw malformed(target, 'content_block_start event');
          return { chunks: blockStart(index, parsed.content_block) };
        case 'content_block_delta':
          return { chunks: blockDelta(blocks.get(index), parsed.delta ?? {}) };
        case 'content_block_stop':
          return { chunks: blockStop(blocks.get(index)) };
        case 'message_delta':
          if (parsed.delta?.stop_reason !== undefined) stopReason = parsed.delta.stop_reason;
          // Counts here are cumulative: they replace what message_start said.
          for (const [key, value] of Object.entries(parsed.usage ?? {})) if (typeof value === 'number') usage[key as keyof MessagesUsage] = value;
          return { chunks: [] };
        case 'message_stop':
          return { chunks: last(), done: true };
        case 'error':
          throw anthropicEventError(target, parsed);
        default:
          // ping, and event types added after this was written.
          return { chunks: [] };
      }
    },
    end() {
      if (finished) return [];
      // The answer was complete but message_stop was lost: finish it. Anything shorter was cut off.
      if (stopReason !== null) return last();
      throw new GatewayError('UPSTREAM_ERROR', `${target.slug} ended the stream before the message was complete`, { provider: target.slug });
    },
  };
}
