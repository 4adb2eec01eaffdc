/**
 * POST /v1/messages: the Messages-style request -> the canonical chat request, and the canonical answer -> a
 * Messages answer, so every chat provider serves it. The stream keeps the spec's known behaviour: input_tokens 0
 * in message_start, stop_reason always end_turn in message_delta, tool calls dropped.
 */
import { randomUUID } from 'node:crypto';
import { chatRequestOf, chatResultOf, type ChatCompletion, type ChatCompletionChunk, type ChatCompletionRequest, type ChatMessage, type ContentPart, type ToolCall } from '../canonical/chat.ts';
import { messagesErrorType, toGatewayError, validationError, type ValidationIssue } from '../errors.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import { encodeSse } from '../streaming/sse.ts';
import { compileRequestSchema } from '../validation.ts';
import { startEventStream } from './chat.ts';
import type { DispatchEndpoint } from './endpoint.ts';
import { messageResponseSchema, messagesRequestSchema, messagesStreamEventSchema } from './schemas/messages.ts';

type TextBlock = { type: 'text'; text: string };
type Block =
  | TextBlock
  | { type: 'image'; source: { type: 'base64'; media_type: string; data: string } }
  | { type: 'document'; source: { type: 'file'; file_id: string } }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content?: string | TextBlock[] };

interface MessagesRequest {
  model: string;
  messages: Array<{ role: 'user' | 'assistant'; content: string | Block[] }>;
  max_tokens: number;
  system?: string | TextBlock[];
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  stream?: boolean;
  tools?: Array<{ name: string; description?: string; input_schema: Record<string, unknown> }>;
  tool_choice?: { type: 'auto' } | { type: 'any' } | { type: 'tool'; name: string };
  metadata?: { user_id?: string | null };
}

type ResponseBlock = TextBlock | { type: 'tool_use'; id: string; name: string; input: unknown };

const validateMessages = compileRequestSchema<MessagesRequest>(messagesRequestSchema);

/** One user message: its tool_result blocks become tool messages (first, as OpenAI wants), the rest one user message. */
function userMessages(blocks: Block[], at: string, issues: ValidationIssue[]): ChatMessage[] {
  const tools: ChatMessage[] = [];
  const parts: ContentPart[] = [];
  blocks.forEach((block, j) => {
    if (block.type === 'text') parts.push({ type: 'text', text: block.text });
    else if (block.type === 'image') parts.push({ type: 'image_url', image_url: { url: `data:${block.source.media_type};base64,${block.source.data}` } });
    else if (block.type === 'document') parts.push({ type: 'file', file: { file_id: block.source.file_id } });
    else if (block.type === 'tool_result') {
      const content = typeof block.content === 'string' ? block.content : (block.content ?? []).map((b) => b.text).join('\n');
      tools.push({ role: 'tool', tool_call_id: block.tool_use_id, content });
    } else issues.push({ path: `${at}/${j}/type`, message: 'tool_use blocks belong to assistant messages' });
  });
  if (parts.length === 0 && tools.length > 0) return tools;
  const only = parts.length === 1 ? parts[0] : undefined;
  const content = parts.length === 0 ? '' : only?.type === 'text' ? only.text : parts;
  return [...tools, { role: 'user', content }];
}

function assistantMessage(blocks: Block[], at: string, issues: ValidationIssue[]): ChatMessage {
  const text: string[] = [];
  const calls: ToolCall[] = [];
  blocks.forEach((block, j) => {
    if (block.type === 'text') text.push(block.text);
    else if (block.type === 'tool_use') calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input) } });
    else issues.push({ path: `${at}/${j}/type`, message: `${block.type} blocks belong to user messages` });
  });
  const content = text.length === 0 && calls.length > 0 ? null : text.join('');
  return { role: 'assistant', content, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
}

export function parseMessagesBody(body: unknown) {
  const request = validateMessages(body);
  const issues: ValidationIssue[] = [];
  const messages: ChatMessage[] = [];
  const { system } = request;
  if (typeof system === 'string' && system !== '') messages.push({ role: 'system', content: system });
  else if (Array.isArray(system) && system.length > 0) messages.push({ role: 'system', content: system.map((b) => ({ type: 'text', text: b.text })) });
  request.messages.forEach((message, i) => {
    const at = `/messages/${i}/content`;
    if (typeof message.content === 'string') messages.push({ role: message.role, content: message.content });
    else if (message.role === 'user') messages.push(...userMessages(message.content, at, issues));
    else messages.push(assistantMessage(message.content, at, issues));
  });
  if (issues.length > 0) throw validationError(issues);

  const canonical: ChatCompletionRequest = { model: request.model, messages, max_tokens: request.max_tokens };
  if (request.stream === true) canonical.stream = true;
  if (request.temperature !== undefined) canonical.temperature = request.temperature;
  if (request.top_p !== undefined) canonical.top_p = request.top_p;
  if (request.stop_sequences && request.stop_sequences.length > 0) canonical.stop = request.stop_sequences;
  if (request.tools) {
    canonical.tools = request.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), parameters: t.input_schema },
    }));
  }
  const choice = request.tool_choice;
  if (choice) canonical.tool_choice = choice.type === 'auto' ? 'auto' : choice.type === 'any' ? 'required' : { type: 'function', function: { name: choice.name } };
  if (typeof request.metadata?.user_id === 'string') canonical.user = request.metadata.user_id;
  return { modality: 'chat' as const, model: request.model, stream: request.stream === true, includeUsage: false, body: canonical };
}

/** `msg_` + the upstream id without its own prefix, so logs can be matched; a fresh id when there is none. */
function messageId(upstreamId: string | undefined): string {
  const bare = (upstreamId ?? '').replace(/^(chatcmpl-|cmpl-|msg_)/, '');
  return `msg_${bare || randomUUID().replace(/-/g, '')}`;
}

const STOP_REASONS: Record<string, string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', function_call: 'tool_use', content_filter: 'refusal' };

/**
 * The stop sequence that ended the answer, when the canonical choice names it: a translator whose upstream reports
 * it sets `stop_sequence`; vLLM-style OpenAI servers report it as `stop_reason`. OpenAI itself does not say.
 */
function matchedStop(choice: object, stops: string[]): string | null {
  const named = choice as { stop_sequence?: unknown; stop_reason?: unknown };
  for (const value of [named.stop_sequence, named.stop_reason]) if (typeof value === 'string' && stops.includes(value)) return value;
  return null;
}

function toolInput(args: string): unknown {
  try {
    const input: unknown = JSON.parse(args);
    return input !== null && typeof input === 'object' && !Array.isArray(input) ? input : {};
  } catch {
    return {}; // arguments cut short (max_tokens) or not JSON: the Messages format wants an object
  }
}

export function toMessage(result: ChatCompletion, model: string, stops: string[]) {
  const choice = result.choices[0];
  const text = choice?.message.content ?? '';
  const calls = choice?.message.tool_calls ?? [];
  const content: ResponseBlock[] = [];
  if (text !== '' || calls.length === 0) content.push({ type: 'text', text });
  for (const call of calls) content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: toolInput(call.function.arguments) });
  const finish = choice?.finish_reason ?? 'stop';
  const stopSequence = finish === 'stop' && choice ? matchedStop(choice, stops) : null;
  const stopReason = stopSequence !== null ? 'stop_sequence' : finish === 'stop' && calls.length > 0 ? 'tool_use' : STOP_REASONS[finish] ?? 'end_turn';
  return {
    id: messageId(result.id),
    type: 'message' as const,
    role: 'assistant' as const,
    content,
    model,
    stop_reason: stopReason,
    stop_sequence: stopSequence,
    usage: { input_tokens: result.usage?.prompt_tokens ?? 0, output_tokens: result.usage?.completion_tokens ?? 0 },
  };
}

const event = (type: string, payload: Record<string, unknown> = {}) => encodeSse(JSON.stringify({ type, ...payload }), type);

async function* messageEvents(chunks: AsyncIterable<ChatCompletionChunk>, model: string, signal: AbortSignal): AsyncGenerator<string> {
  let started = false;
  let outputTokens = 0;
  const start = (id: string) => event('message_start', {
    message: { id, type: 'message', role: 'assistant', content: [], model, stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } },
  }) + event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
  try {
    for await (const chunk of chunks) {
      if (!started) {
        started = true;
        yield start(messageId(chunk.id));
      }
      if (chunk.usage) outputTokens = chunk.usage.completion_tokens;
      for (const choice of chunk.choices) {
        // Text only: tool calls are not streamed on this endpoint (spec, known streaming behaviour 3).
        const text = choice.index === 0 ? choice.delta.content : undefined;
        if (text) yield event('content_block_delta', { index: 0, delta: { type: 'text_delta', text } });
      }
    }
    if (!started) yield start(messageId(undefined));
    yield event('content_block_stop', { index: 0 })
      + event('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: outputTokens } })
      + event('message_stop');
  } catch (err) {
    if (signal.aborted) return;
    const error = toGatewayError(err);
    yield event('error', { error: { type: messagesErrorType(error.status), message: error.message } });
  }
}

/** The model after routing (X-Model); what the answer says when a plugin answered without routing. */
function routedModel(ctx: GatewayContext, fallback: string): string {
  return ctx.state.gw.target?.upstreamModel ?? fallback;
}

export const messagesEndpoint: DispatchEndpoint = {
  kind: 'dispatch',
  method: 'POST',
  path: '/v1/messages',
  capability: 'chat',
  summary: 'Create a message (Messages-style wire format), streaming or not; served by any chat provider.',
  errorEnvelope: 'messages',
  requestSchema: messagesRequestSchema,
  responses: {
    '200': { description: 'The message; with stream true, a text/event-stream of named events.', schema: messageResponseSchema },
    '200-stream': { description: 'Streaming event', schema: messagesStreamEventSchema, contentType: 'text/event-stream' },
  },
  parse: parseMessagesBody,
  respond(ctx) {
    const gw = ctx.state.gw;
    const requested = gw.canonical?.model ?? '';
    if (gw.stream) {
      startEventStream(ctx, messageEvents(gw.stream, routedModel(ctx, requested), gw.signal));
      return;
    }
    const result = chatResultOf(gw.result!);
    const stop = chatRequestOf(gw.canonical!).body.stop;
    ctx.status = 200;
    ctx.body = toMessage(result, routedModel(ctx, result.model), typeof stop === 'string' ? [stop] : stop ?? []);
  },
};
