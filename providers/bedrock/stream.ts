/**
 * ConverseStream events (already decoded from event-stream frames by core/streaming/aws-eventstream.ts) ->
 * canonical chunks. Content blocks are numbered across text and tools; tool calls are numbered among
 * themselves, as OpenAI's tool_calls[].index. Usage only comes in the last event, metadata.
 */
import type { ChatCompletionChunk, ChatCompletionRequest, FinishReason } from '../../core/canonical/chat.ts';
import type { ChatStreamDecoder, ProviderTarget, StreamEvent } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { bedrockStreamException, malformed } from './errors.ts';
import { jsonAnswerTool } from './request.ts';
import { completionId, finishReason, usageOf, type ConverseUsage } from './response.ts';

interface Payload {
  contentBlockIndex?: unknown;
  start?: { toolUse?: { toolUseId?: unknown; name?: unknown } };
  delta?: { text?: unknown; toolUse?: { input?: unknown } };
  stopReason?: unknown;
  usage?: ConverseUsage;
}

type Block = { kind: 'tool'; index: number } | { kind: 'json' };

export function converseStreamDecoder(target: ProviderTarget, request: ChatCompletionRequest): ChatStreamDecoder {
  const id = completionId();
  const created = Math.floor(Date.now() / 1000);
  const jsonTool = jsonAnswerTool(request)?.name;
  const blocks = new Map<unknown, Block>();
  let tools = 0;
  let answeredJson = false;
  let stopped = false;

  const chunk = (delta: ChatCompletionChunk['choices'][number]['delta'], finish: FinishReason | null = null): ChatCompletionChunk =>
    ({ id, object: 'chat.completion.chunk', created, model: target.upstreamModel, choices: [{ index: 0, delta, finish_reason: finish }] });

  const parse = (event: StreamEvent): Payload => {
    try {
      const value = JSON.parse(event.data) as unknown;
      if (value && typeof value === 'object') return value as Payload;
    } catch {
      // reported below
    }
    throw malformed(target, `${event.event} event`);
  };

  const start = (payload: Payload): ChatCompletionChunk[] => {
    const toolUse = payload.start?.toolUse;
    if (!toolUse) return [];
    if (typeof toolUse.toolUseId !== 'string' || typeof toolUse.name !== 'string') throw malformed(target, 'contentBlockStart event');
    if (toolUse.name === jsonTool) {
      blocks.set(payload.contentBlockIndex, { kind: 'json' });
      answeredJson = true;
      return [];
    }
    const index = tools++;
    blocks.set(payload.contentBlockIndex, { kind: 'tool', index });
    return [chunk({ tool_calls: [{ index, id: toolUse.toolUseId, type: 'function', function: { name: toolUse.name, arguments: '' } }] })];
  };

  const delta = (payload: Payload): ChatCompletionChunk[] => {
    const { text, toolUse } = payload.delta ?? {};
    if (typeof text === 'string') return text === '' ? [] : [chunk({ content: text })];
    if (!toolUse) return []; // reasoning and other deltas have no canonical place
    const block = blocks.get(payload.contentBlockIndex);
    if (!block || typeof toolUse.input !== 'string') throw malformed(target, 'toolUse delta');
    if (toolUse.input === '') return [];
    if (block.kind === 'json') return [chunk({ content: toolUse.input })];
    return [chunk({ tool_calls: [{ index: block.index, function: { arguments: toolUse.input } }] })];
  };

  return {
    event(event) {
      if (event.event.startsWith('exception:')) throw bedrockStreamException(target, event.event.slice('exception:'.length), event.data);
      switch (event.event) {
        case 'messageStart':
          parse(event);
          return { chunks: [chunk({ role: 'assistant', content: '' })] };
        case 'contentBlockStart':
          return { chunks: start(parse(event)) };
        case 'contentBlockDelta':
          return { chunks: delta(parse(event)) };
        case 'messageStop': {
          let finish = finishReason(parse(event).stopReason);
          if (answeredJson && tools === 0 && finish === 'tool_calls') finish = 'stop';
          stopped = true;
          return { chunks: [chunk({}, finish)] };
        }
        case 'metadata': {
          const usage = usageOf(parse(event).usage);
          if (!usage) return { chunks: [], done: true };
          return { chunks: [{ id, object: 'chat.completion.chunk', created, model: target.upstreamModel, choices: [], usage }], done: true };
        }
        default:
          return { chunks: [] }; // contentBlockStop, and events added later
      }
    },
    end() {
      // Frames end cleanly between messages too: without messageStop the answer was cut short.
      if (!stopped) throw new GatewayError('UPSTREAM_ERROR', `${target.slug} ended the stream before messageStop`, { provider: target.slug });
      return [];
    },
  };
}
