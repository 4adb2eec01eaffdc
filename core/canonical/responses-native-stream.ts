/**
 * A native Responses stream (OpenAI's named events) -> canonical chat chunks, so the plugins and the gateway's
 * own Responses events see what they see of any chat stream: text deltas, function calls keyed by their index
 * among the calls, and the end with usage at response.completed (or response.incomplete). The final native
 * Response is kept for the record. An `error` event or response.failed fails the stream.
 */
import { GatewayError } from '../errors.ts';
import type { ChatCompletionChunk, ChunkToolCallDelta } from './chat.ts';
import { failedNative, finishOfNative, nativeResponseOf, usageOfNative, type NativeResponse } from './responses-native.ts';

interface NativeEvent {
  type?: string;
  response?: unknown;
  output_index?: number;
  item?: { type?: string; call_id?: string; name?: string; arguments?: string };
  delta?: string;
  code?: string | null;
  message?: string;
}

const END_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

export class NativeStreamReader {
  /** The Response of the event that ended the stream. */
  final: NativeResponse | undefined;
  private id = '';
  private model: string;
  private readonly created = Math.floor(Date.now() / 1000);
  /** Output index of a function_call item -> its index among the calls. */
  private readonly calls = new Map<number, number>();

  constructor(private readonly provider: string, upstreamModel: string) {
    this.model = upstreamModel;
  }

  private chunk(delta: ChatCompletionChunk['choices'][number]['delta'], finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null): ChatCompletionChunk {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index: 0, delta, finish_reason: finish }] };
  }

  private malformed(what: string): GatewayError {
    return new GatewayError('UPSTREAM_ERROR', `${this.provider} sent a malformed Responses stream event (${what})`, { provider: this.provider });
  }

  /** The chunks of one event's data; `done` once the Response ended. */
  event(data: string): { chunks: ChatCompletionChunk[]; done?: boolean } {
    if (data === '' || data === '[DONE]') return { chunks: [] };
    let event: NativeEvent;
    try {
      event = JSON.parse(data) as NativeEvent;
    } catch {
      throw this.malformed('not JSON');
    }
    if (!event || typeof event !== 'object') throw this.malformed('not an object');
    switch (event.type) {
      case 'response.created': {
        const response = nativeResponseOf(event.response, this.provider);
        this.id = response.id;
        if (typeof response.model === 'string') this.model = response.model;
        return { chunks: [this.chunk({ role: 'assistant', content: '' })] };
      }
      case 'response.output_text.delta':
        return { chunks: typeof event.delta === 'string' && event.delta !== '' ? [this.chunk({ content: event.delta })] : [] };
      case 'response.output_item.added': {
        const item = event.item;
        if (item?.type !== 'function_call') return { chunks: [] };
        if (typeof event.output_index !== 'number' || typeof item.call_id !== 'string' || typeof item.name !== 'string') throw this.malformed('function_call item');
        const index = this.calls.size;
        this.calls.set(event.output_index, index);
        const call: ChunkToolCallDelta = { index, id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments ?? '' } };
        return { chunks: [this.chunk({ tool_calls: [call] })] };
      }
      case 'response.function_call_arguments.delta': {
        const index = this.calls.get(event.output_index ?? -1);
        if (index === undefined) throw this.malformed('arguments of an unknown function call');
        return { chunks: typeof event.delta === 'string' && event.delta !== '' ? [this.chunk({ tool_calls: [{ index, function: { arguments: event.delta } }] })] : [] };
      }
      case 'error':
        throw new GatewayError('UPSTREAM_ERROR', `${this.provider}: ${event.message ?? 'stream error'}`, { provider: this.provider, upstreamError: { code: event.code ?? null, message: event.message ?? null } });
      default:
        if (event.type && END_EVENTS.has(event.type)) return this.ended(nativeResponseOf(event.response, this.provider));
        return { chunks: [] }; // content parts, item ends, reasoning and tool progress: nothing a chat chunk carries
    }
  }

  private ended(response: NativeResponse): { chunks: ChatCompletionChunk[]; done: true } {
    if (response.status === 'failed') throw failedNative(response, this.provider);
    this.final = response;
    if (!this.id) this.id = response.id;
    const last = this.chunk({}, finishOfNative(response, this.calls.size > 0));
    const usage = usageOfNative(response.usage);
    if (usage) last.usage = usage;
    return { chunks: [last], done: true };
  }

  /** The upstream closed: without the Response's end, the answer was cut short. */
  end(): ChatCompletionChunk[] {
    if (this.final) return [];
    throw new GatewayError('UPSTREAM_ERROR', `${this.provider} closed the stream before response.completed: the answer was cut short`, { provider: this.provider });
  }
}
