/**
 * POST /v1/completions: the chat request body exactly, answered in the legacy text form (`text_completion`, one
 * choice). It goes through the same pipeline and dispatcher as chat, so every chat provider serves it.
 */
import { randomUUID } from 'node:crypto';
import { chatRequestOf, chatResultOf, type ChatCompletion, type ChatCompletionChunk, type Usage } from '../canonical/chat.ts';
import type { JsonSchema } from '../config/schema.ts';
import { renderError, toGatewayError } from '../errors.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import { encodeSse } from '../streaming/sse.ts';
import { parseChatBody, startEventStream } from './chat.ts';
import type { DispatchEndpoint } from './endpoint.ts';
import { chatRequestSchema } from './schemas/chat.ts';

/** `cmpl-` + the upstream id without its own prefix, so logs can be matched; a fresh id when there is none. */
function completionId(upstreamId: string | undefined): string {
  const bare = (upstreamId ?? '').replace(/^(chatcmpl-|cmpl-|msg_)/, '');
  return `cmpl-${bare || randomUUID().replace(/-/g, '')}`;
}

/**
 * The chat schema accepts n from 1 to 10, and so does this endpoint; but the legacy answer has exactly one choice,
 * so the request goes upstream without n (one choice generated, one paid for).
 */
export function parseCompletionsBody(body: unknown) {
  const request = parseChatBody(body);
  const { n: _single, ...rest } = request.body;
  return { ...request, body: rest };
}

export function toTextCompletion(result: ChatCompletion, model: string) {
  const choice = result.choices.find((c) => c.index === 0) ?? result.choices[0];
  const usage = result.usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  return {
    id: completionId(result.id),
    object: 'text_completion' as const,
    created: result.created,
    model,
    choices: [{ text: choice?.message.content ?? '', index: 0, finish_reason: choice?.finish_reason ?? null }],
    usage: { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens, total_tokens: usage.total_tokens },
  };
}

async function* textEvents(chunks: AsyncIterable<ChatCompletionChunk>, model: string, includeUsage: boolean, signal: AbortSignal): AsyncGenerator<string> {
  const frame = (chunk: ChatCompletionChunk, rest: Record<string, unknown>) =>
    encodeSse(JSON.stringify({ id: completionId(chunk.id), object: 'text_completion', created: chunk.created, model, ...rest }));
  try {
    for await (const chunk of chunks) {
      const choice = chunk.choices.find((c) => c.index === 0);
      const text = choice?.delta.content ?? '';
      // Role-only and tool-call deltas carry no text: only text and the finish reason go out.
      if (choice && (text !== '' || choice.finish_reason !== null)) {
        yield frame(chunk, { choices: [{ text, index: 0, finish_reason: choice.finish_reason }] });
      }
      if (includeUsage && chunk.usage) {
        const { prompt_tokens, completion_tokens, total_tokens }: Usage = chunk.usage;
        yield frame(chunk, { choices: [], usage: { prompt_tokens, completion_tokens, total_tokens } });
      }
    }
    yield 'data: [DONE]\n\n';
  } catch (err) {
    if (signal.aborted) return;
    yield encodeSse(JSON.stringify(renderError(toGatewayError(err), 'legacy')));
  }
}

function routedModel(ctx: GatewayContext, fallback: string): string {
  return ctx.state.gw.target?.upstreamModel ?? fallback;
}

const usageSchema: JsonSchema = {
  type: 'object', required: ['prompt_tokens', 'completion_tokens', 'total_tokens'],
  properties: { prompt_tokens: { type: 'integer' }, completion_tokens: { type: 'integer' }, total_tokens: { type: 'integer' } },
};

const textCompletionSchema: JsonSchema = {
  type: 'object', required: ['id', 'object', 'created', 'model', 'choices', 'usage'],
  properties: {
    id: { type: 'string', pattern: '^cmpl-' },
    object: { type: 'string', enum: ['text_completion'] },
    created: { type: 'integer' },
    model: { type: 'string', description: 'The model after routing (as X-Model).' },
    choices: {
      type: 'array', minItems: 1, maxItems: 1,
      items: {
        type: 'object', required: ['text', 'index', 'finish_reason'],
        properties: {
          text: { type: 'string' },
          index: { type: 'integer', enum: [0] },
          finish_reason: { type: 'string', nullable: true, enum: ['stop', 'length', 'tool_calls', 'content_filter', 'function_call', null] },
        },
      },
    },
    usage: usageSchema,
  },
};

const textCompletionChunkSchema: JsonSchema = {
  type: 'object', required: ['id', 'object', 'created', 'model', 'choices'],
  description: 'One `data:` event of the text/event-stream answer; the stream ends with `data: [DONE]`. With '
    + 'stream_options.include_usage, a last chunk with no choices carries usage.',
  properties: {
    id: { type: 'string' },
    object: { type: 'string', enum: ['text_completion'] },
    created: { type: 'integer' },
    model: { type: 'string' },
    choices: {
      type: 'array', maxItems: 1,
      items: {
        type: 'object', required: ['text', 'index', 'finish_reason'],
        properties: { text: { type: 'string' }, index: { type: 'integer' }, finish_reason: { type: 'string', nullable: true } },
      },
    },
    usage: usageSchema,
  },
};

export const completionsEndpoint: DispatchEndpoint = {
  kind: 'dispatch',
  method: 'POST',
  path: '/v1/completions',
  capability: 'completions',
  summary: 'Legacy completion: the chat request body, answered as a text_completion with one choice (n is not sent upstream).',
  errorEnvelope: 'legacy',
  requestSchema: chatRequestSchema,
  responses: {
    '200': { description: 'The completion; with stream true, a text/event-stream of text_completion chunks ending with [DONE].', schema: textCompletionSchema },
    '200-stream': { description: 'Streaming chunk', schema: textCompletionChunkSchema, contentType: 'text/event-stream' },
  },
  parse: parseCompletionsBody,
  respond(ctx) {
    const gw = ctx.state.gw;
    if (gw.stream) {
      startEventStream(ctx, textEvents(gw.stream, routedModel(ctx, gw.canonical?.model ?? ''), chatRequestOf(gw.canonical!).includeUsage, gw.signal));
      return;
    }
    const result = chatResultOf(gw.result!);
    ctx.status = 200;
    ctx.body = toTextCompletion(result, routedModel(ctx, result.model));
  },
};
