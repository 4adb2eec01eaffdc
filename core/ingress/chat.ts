/** POST /v1/chat/completions: the canonical format on the wire, so parsing and answering are near identity. */
import { chatRequestOf, type ChatCompletionChunk, type ChatCompletionRequest } from '../canonical/chat.ts';
import { renderError, toGatewayError, validationError } from '../errors.ts';
import { EventStreamBody } from './event-stream.ts';
import { encodeSse } from '../streaming/sse.ts';
import { compileRequestSchema } from '../validation.ts';
import type { DispatchEndpoint } from './endpoint.ts';
import { chatCompletionChunkSchema, chatCompletionSchema, chatRequestSchema } from './schemas/chat.ts';
import type { GatewayContext } from '../pipeline/context.ts';

const validateChat = compileRequestSchema<ChatCompletionRequest>(chatRequestSchema);

export function parseChatBody(body: unknown) {
  const request = validateChat(body);
  if (request.top_logprobs !== undefined && request.logprobs !== true) {
    throw validationError([{ path: '/top_logprobs', message: 'requires logprobs: true' }]);
  }
  return {
    modality: 'chat' as const,
    model: request.model,
    stream: request.stream === true,
    includeUsage: request.stream_options?.include_usage === true,
    body: request,
  };
}

export function startEventStream(ctx: GatewayContext, events: AsyncIterable<string>): void {
  ctx.status = 200;
  // Set before the headers: Koa types any object body as JSON.
  ctx.body = new EventStreamBody(events);
  ctx.set('Content-Type', 'text/event-stream');
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('X-Accel-Buffering', 'no');
}

async function* chatEvents(chunks: AsyncIterable<ChatCompletionChunk>, includeUsage: boolean, signal: AbortSignal): AsyncGenerator<string> {
  try {
    for await (const chunk of chunks) {
      if (!includeUsage && chunk.usage !== undefined) {
        // The gateway always asks upstream for usage; a caller who did not ask gets the stream it expects.
        if (chunk.choices.length === 0) continue;
        const { usage: _dropped, ...rest } = chunk;
        yield encodeSse(JSON.stringify(rest));
        continue;
      }
      yield encodeSse(JSON.stringify(chunk));
    }
    yield 'data: [DONE]\n\n';
  } catch (err) {
    if (signal.aborted) return;
    yield encodeSse(JSON.stringify(renderError(toGatewayError(err), 'canonical')));
  }
}

export const chatCompletionsEndpoint: DispatchEndpoint = {
  kind: 'dispatch',
  method: 'POST',
  path: '/v1/chat/completions',
  capability: 'chat',
  summary: 'Create a chat completion (OpenAI wire format), streaming or not.',
  errorEnvelope: 'canonical',
  requestSchema: chatRequestSchema,
  responses: {
    '200': { description: 'The completion; with stream true, a text/event-stream of chunks ending with [DONE].', schema: chatCompletionSchema },
    '200-stream': { description: 'Streaming chunk', schema: chatCompletionChunkSchema, contentType: 'text/event-stream' },
  },
  parse: parseChatBody,
  respond(ctx) {
    const gw = ctx.state.gw;
    if (gw.stream) {
      startEventStream(ctx, chatEvents(gw.stream, chatRequestOf(gw.canonical!).includeUsage, gw.signal));
      return;
    }
    ctx.status = 200;
    ctx.body = gw.result;
  },
};
