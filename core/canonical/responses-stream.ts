/**
 * Canonical chat chunks -> the Responses streaming events of the output items, as OpenAI's client accumulates
 * them: an item is added when its first delta arrives (reasoning, text, each tool call by its index), its deltas
 * follow, and every open item is closed (its .done events) when the answer ends or stops. The lifecycle events
 * (response.created ... response.completed) and the sequence numbers are the writer's.
 */
import type { ChatCompletionChunk, Usage } from './chat.ts';
import { itemId, type ItemStatus, type OutputFunctionCall, type OutputItem, type OutputMessage, type OutputReasoning } from './responses.ts';

export interface ResponsesEvent { type: string; [field: string]: unknown }

type Delta = ChatCompletionChunk['choices'][number]['delta'] & { reasoning_content?: unknown };

export class OutputAssembler {
  private readonly items: OutputItem[] = [];
  private readonly open = new Set<number>();
  private text: { index: number; item: OutputMessage } | undefined;
  private reasoning: { index: number; item: OutputReasoning } | undefined;
  private readonly calls = new Map<number, { index: number; item: OutputFunctionCall }>();
  finishReason: string | null = null;
  usage: Usage | null = null;
  upstreamId: string | null = null;
  model: string | null = null;

  /** The events of one chunk (only the first choice is a Responses answer). */
  push(chunk: ChatCompletionChunk): ResponsesEvent[] {
    if (chunk.id) this.upstreamId ??= chunk.id;
    if (chunk.model) this.model ??= chunk.model;
    if (chunk.usage) this.usage = chunk.usage;
    const events: ResponsesEvent[] = [];
    for (const choice of chunk.choices) {
      if (choice.index !== 0) continue;
      const delta = choice.delta as Delta;
      if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') events.push(...this.reasoningDelta(delta.reasoning_content));
      if (delta.content) events.push(...this.textDelta(delta.content));
      for (const call of delta.tool_calls ?? []) events.push(...this.callDelta(call));
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
    }
    return events;
  }

  private add(item: OutputItem): { index: number; events: ResponsesEvent[] } {
    const index = this.items.push(item) - 1;
    this.open.add(index);
    return { index, events: [{ type: 'response.output_item.added', output_index: index, item: structuredClone(item) }] };
  }

  private reasoningDelta(text: string): ResponsesEvent[] {
    const events: ResponsesEvent[] = [];
    if (!this.reasoning) {
      const item: OutputReasoning = { id: itemId('rs'), type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: '' }], status: 'in_progress' };
      const added = this.add(item);
      this.reasoning = { index: added.index, item };
      events.push(...added.events);
    }
    const { index, item } = this.reasoning;
    item.content[0]!.text += text;
    events.push({ type: 'response.reasoning_text.delta', item_id: item.id, output_index: index, content_index: 0, delta: text });
    return events;
  }

  private textDelta(text: string): ResponsesEvent[] {
    const events: ResponsesEvent[] = [];
    if (!this.text) {
      const item: OutputMessage = { id: itemId('msg'), type: 'message', role: 'assistant', status: 'in_progress', content: [] };
      const added = this.add(item);
      this.text = { index: added.index, item };
      const part = { type: 'output_text' as const, text: '', annotations: [] };
      item.content.push(part);
      events.push(...added.events, { type: 'response.content_part.added', item_id: item.id, output_index: added.index, content_index: 0, part: { ...part, annotations: [] } });
    }
    const { index, item } = this.text;
    item.content[0]!.text += text;
    events.push({ type: 'response.output_text.delta', item_id: item.id, output_index: index, content_index: 0, delta: text, logprobs: [] });
    return events;
  }

  private callDelta(call: NonNullable<Delta['tool_calls']>[number]): ResponsesEvent[] {
    const events: ResponsesEvent[] = [];
    let entry = this.calls.get(call.index);
    if (!entry) {
      const item: OutputFunctionCall = {
        id: itemId('fc'), type: 'function_call', call_id: call.id ?? `call_${itemId('fc').slice(3)}`, name: call.function?.name ?? '', arguments: '', status: 'in_progress',
      };
      const added = this.add(item);
      entry = { index: added.index, item };
      this.calls.set(call.index, entry);
      events.push(...added.events);
    } else if (call.function?.name) entry.item.name = call.function.name;
    const piece = call.function?.arguments;
    if (piece) {
      entry.item.arguments += piece;
      events.push({ type: 'response.function_call_arguments.delta', item_id: entry.item.id, output_index: entry.index, delta: piece });
    }
    return events;
  }

  /** Closes every open item, in output order, with `status`: their .done events. */
  close(status: ItemStatus): ResponsesEvent[] {
    const events: ResponsesEvent[] = [];
    for (const index of [...this.open].sort((a, b) => a - b)) {
      const item = this.items[index]!;
      item.status = status;
      if (item.type === 'message') {
        const part = item.content[0]!;
        events.push(
          { type: 'response.output_text.done', item_id: item.id, output_index: index, content_index: 0, text: part.text, logprobs: [] },
          { type: 'response.content_part.done', item_id: item.id, output_index: index, content_index: 0, part: structuredClone(part) },
        );
      } else if (item.type === 'reasoning') {
        events.push({ type: 'response.reasoning_text.done', item_id: item.id, output_index: index, content_index: 0, text: item.content[0]!.text });
      } else {
        events.push({ type: 'response.function_call_arguments.done', item_id: item.id, output_index: index, name: item.name, arguments: item.arguments });
      }
      events.push({ type: 'response.output_item.done', output_index: index, item: structuredClone(item) });
    }
    this.open.clear();
    return events;
  }

  /** The output items so far (a copy): complete once closed, partial when asked mid-stream. */
  output(): OutputItem[] {
    return structuredClone(this.items);
  }
}
