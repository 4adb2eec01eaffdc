/**
 * The Responses format's items and the canonical chat messages: input items (and the stored turns of a
 * conversation) -> chat messages, and a chat answer -> output items. Output items are stored as they are sent, so
 * a later turn reads them back as input (an assistant message, function calls); reasoning items are kept for the
 * caller but never sent to a provider again.
 */
import { randomUUID } from 'node:crypto';
import type { ValidationIssue } from '../errors.ts';
import type { ChatCompletion, ChatMessage, ContentPart, ToolCall, Usage } from './chat.ts';

export type ResponsesContentPart =
  | { type: 'input_text'; text: string }
  | { type: 'output_text'; text: string; annotations?: unknown[] }
  | { type: 'input_image'; image_url?: string; file_id?: string; detail?: 'auto' | 'low' | 'high' }
  | { type: 'input_file'; file_id?: string; file_data?: string; filename?: string };

export interface MessageItem {
  type?: 'message';
  id?: string;
  role: 'user' | 'assistant' | 'system' | 'developer';
  content: string | ResponsesContentPart[];
}
export interface FunctionCallItem { type: 'function_call'; id?: string; call_id: string; name: string; arguments: string; status?: string }
export interface FunctionCallOutputItem { type: 'function_call_output'; id?: string; call_id: string; output: string | Array<{ type: 'input_text'; text: string }> }
export interface ReasoningItem { type: 'reasoning'; id?: string; summary?: unknown[]; content?: Array<{ type: string; text?: string }> }
export interface ItemReference { type: 'item_reference'; id: string }

export type InputItem = MessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningItem | ItemReference;

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';
export interface OutputMessage {
  id: string; type: 'message'; role: 'assistant'; status: ItemStatus;
  content: Array<{ type: 'output_text'; text: string; annotations: unknown[] }>;
}
export interface OutputFunctionCall { id: string; type: 'function_call'; call_id: string; name: string; arguments: string; status: ItemStatus }
export interface OutputReasoning { id: string; type: 'reasoning'; summary: unknown[]; content: Array<{ type: 'reasoning_text'; text: string }>; status: ItemStatus }
export type OutputItem = OutputMessage | OutputFunctionCall | OutputReasoning;

/** `msg_`, `fc_`, `rs_` + 32 hex digits, as OpenAI's item ids look. */
export const itemId = (prefix: 'msg' | 'fc' | 'rs') => `${prefix}_${randomUUID().replace(/-/g, '')}`;

/** The array form of `input`: a string is one user message. */
export function inputItems(input: string | InputItem[]): InputItem[] {
  return typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : input;
}

function contentOf(item: MessageItem, at: string, issues: ValidationIssue[], stored: boolean): string | ContentPart[] {
  if (typeof item.content === 'string') return item.content;
  const parts: ContentPart[] = [];
  item.content.forEach((part, j) => {
    if (part.type === 'input_text' || part.type === 'output_text') parts.push({ type: 'text', text: part.text });
    else if (item.role === 'assistant' && stored) return; // a provider's own part (a refusal): not replayed
    else if (item.role === 'assistant') issues.push({ path: `${at}/content/${j}/type`, message: `${part.type} parts belong to user, system or developer messages` });
    else if (part.type === 'input_image' && part.image_url !== undefined) {
      parts.push({ type: 'image_url', image_url: { url: part.image_url, ...(part.detail ? { detail: part.detail } : {}) } });
    } else if (part.type === 'input_image') parts.push({ type: 'file', file: { file_id: part.file_id! } });
    else {
      const { file_id, file_data, filename } = part;
      parts.push({ type: 'file', file: { ...(file_id ? { file_id } : {}), ...(file_data ? { file_data } : {}), ...(filename ? { filename } : {}) } });
    }
  });
  const only = parts.length === 1 ? parts[0] : undefined;
  // Assistant turns are text only in every chat translator: joined.
  if (item.role === 'assistant') return parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
  return only?.type === 'text' ? only.text : parts;
}

const outputText = (output: FunctionCallOutputItem['output']) => (typeof output === 'string' ? output : output.map((p) => p.text).join(''));

const REPLAYED = new Set(['message', 'function_call', 'function_call_output', 'reasoning']);

/**
 * Appends the chat messages of `items` to `messages`: a function call joins the assistant message just before it
 * (the text the model said with it, or the calls before it), so a turn's calls stay one assistant message.
 * `at` is the JSON pointer of the items in the request, for the errors. `stored`: the items of a stored turn,
 * where what chat cannot carry is left out rather than refused.
 */
export function appendItems(messages: ChatMessage[], items: readonly InputItem[], at: string, issues: ValidationIssue[], stored = false): void {
  items.forEach((item, i) => {
    const here = `${at}/${i}`;
    // A stored turn served natively holds the provider's own items (web_search_call, ...): nothing chat can carry.
    if (stored && !REPLAYED.has(item.type ?? 'message')) return;
    switch (item.type) {
      case 'function_call': {
        const call: ToolCall = { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
        const last = messages.at(-1);
        if (last?.role === 'assistant') last.tool_calls = [...(last.tool_calls ?? []), call];
        else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
        return;
      }
      case 'function_call_output':
        messages.push({ role: 'tool', tool_call_id: item.call_id, content: outputText(item.output) });
        return;
      case 'reasoning':
        return; // the model's own thinking: kept for the caller, not replayed to a provider
      case 'item_reference':
        issues.push({ path: `${here}/type`, message: 'item_reference is not supported: send the item itself, or continue with previous_response_id' });
        return;
      default:
        messages.push({ role: item.role, content: contentOf(item, here, issues, stored) });
    }
  });
}

/** A stored turn, as a continuation reads it back. */
export interface StoredTurn { input: unknown[]; output: unknown[] }

/**
 * The conversation of a continuation: each stored turn's input then output items (oldest first; their
 * instructions are not carried over, as OpenAI's are not), then this request's instructions as the first message,
 * then its input.
 */
export function conversationMessages(turns: readonly StoredTurn[], instructions: string | null | undefined, input: InputItem[], issues: ValidationIssue[]): ChatMessage[] {
  const history: ChatMessage[] = [];
  // Stored items were validated when their turn was made; a bad one now is the gateway's, not the caller's.
  for (const turn of turns) {
    appendItems(history, turn.input as InputItem[], '/previous_response_id', issues, true);
    appendItems(history, turn.output as InputItem[], '/previous_response_id', issues, true);
  }
  const messages: ChatMessage[] = instructions ? [{ role: 'system', content: instructions }] : [];
  messages.push(...history);
  appendItems(messages, input, '/input', issues);
  return messages;
}

/** The Responses usage of a chat usage, with the details the provider reported. */
export function responsesUsage(usage: Usage | null | undefined): { input_tokens: number; output_tokens: number; total_tokens: number; [detail: string]: unknown } | null {
  if (!usage) return null;
  const out: { input_tokens: number; output_tokens: number; total_tokens: number; [detail: string]: unknown } = {
    input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens, total_tokens: usage.total_tokens,
  };
  const cached = usage.prompt_tokens_details?.cached_tokens;
  const reasoning = usage.completion_tokens_details?.reasoning_tokens;
  if (cached !== undefined) out.input_tokens_details = { cached_tokens: cached };
  if (reasoning !== undefined) out.output_tokens_details = { reasoning_tokens: reasoning };
  return out;
}

/** A length cut is `incomplete` (OpenAI: max_output_tokens); every other end is `completed`. */
export const responseStatusOf = (finish: string | null | undefined) => (finish === 'length' ? 'incomplete' as const : 'completed' as const);

/** A chat answer's first choice -> output items: reasoning (when the provider gave it), text, function calls. */
export function outputItemsOf(result: ChatCompletion): OutputItem[] {
  const choice = result.choices[0];
  if (!choice) return [];
  const message = choice.message as typeof choice.message & { reasoning_content?: unknown };
  const status: ItemStatus = choice.finish_reason === 'length' ? 'incomplete' : 'completed';
  const items: OutputItem[] = [];
  if (typeof message.reasoning_content === 'string' && message.reasoning_content !== '') {
    items.push({ id: itemId('rs'), type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: message.reasoning_content }], status });
  }
  const calls = message.tool_calls ?? [];
  if ((message.content ?? '') !== '' || calls.length === 0) {
    items.push({ id: itemId('msg'), type: 'message', role: 'assistant', status, content: [{ type: 'output_text', text: message.content ?? '', annotations: [] }] });
  }
  for (const call of calls) {
    items.push({ id: itemId('fc'), type: 'function_call', call_id: call.id, name: call.function.name, arguments: call.function.arguments, status: 'completed' });
  }
  return items;
}
