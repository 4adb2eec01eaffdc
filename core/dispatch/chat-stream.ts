/**
 * An upstream stream -> canonical chunks, with usage at the end of every stream: when the provider reported
 * none, a last chunk carries an estimate (and the request is marked as estimated).
 */
import type { ChatCompletionChunk, ChatCompletionRequest } from '../canonical/chat.ts';
import { estimateUsage } from '../canonical/estimate.ts';
import { streamFramer } from '../streaming/decode.ts';
import type { StreamEvent } from '../streaming/events.ts';
import type { ChatTranslator, ProviderTarget } from './provider.ts';
import type { UpstreamResponse } from './upstream.ts';
import { isAbort, transportError } from './upstream-errors.ts';
import type { RequestObservation } from '../pipeline/context.ts';

export interface ChatStreamInput {
  response: UpstreamResponse;
  /** The chat translator, or the completion translator of a native legacy completion. */
  chat: Pick<ChatTranslator, 'streamFormat' | 'streamDecoder'>;
  target: ProviderTarget;
  request: ChatCompletionRequest;
  signal: AbortSignal;
  /** upstream.maxFrameBytes: a larger frame fails the stream and drops the connection. */
  maxFrameBytes: number;
  onEstimated(): void;
  /** Where the stream's end and last usage are noted, for the access line and the metrics. */
  observed?: RequestObservation;
}

export async function* canonicalChatStream(input: ChatStreamInput): AsyncGenerator<ChatCompletionChunk> {
  const { response, chat, target, request, signal } = input;
  const decoder = chat.streamDecoder(target, request);
  let finished = false;
  let last: ChatCompletionChunk | undefined;
  let sawUsage = false;
  const text: string[] = [];
  const note = (chunk: ChatCompletionChunk) => {
    last = chunk;
    if (chunk.usage) {
      sawUsage = true;
      if (input.observed) input.observed.streamUsage = chunk.usage;
    }
    for (const choice of chunk.choices) {
      if (choice.delta.content) text.push(choice.delta.content);
      for (const call of choice.delta.tool_calls ?? []) if (call.function?.arguments) text.push(call.function.arguments);
    }
  };
  try {
    // Leaving the loop at the stream's terminator must not destroy the body (the default of a Readable's iterator),
    // which would drop the connection and cost an AbortError with its stack; the finally block below decides.
    // Once the loop has let go of the body, an abort that undici reports on it (the caller gone) is expected.
    const reads = response.body.on('error', ignore).iterator({ destroyOnReturn: false });
    const framer = streamFramer(chat.streamFormat, input.maxFrameBytes);
    let done = false;
    /** An event the translator refused: thrown once the chunks of the events before it are out. */
    let refused: { error: unknown } | undefined;
    /** The chunks of a read's events, up to the terminator (`done`) or a refused event. */
    const chunksOf = (events: StreamEvent[]): ChatCompletionChunk[] => {
      const out: ChatCompletionChunk[] = [];
      try {
        for (const event of events) {
          const decoded = decoder.event(event);
          for (const chunk of decoded.chunks) out.push(chunk);
          if (decoded.done) {
            done = true;
            break;
          }
        }
      } catch (error) {
        refused = { error };
      }
      return out;
    };
    for await (const bytes of reads) {
      for (const chunk of chunksOf(framer.push(bytes))) {
        note(chunk);
        yield chunk;
      }
      if (refused) throw refused.error;
      if (done) break;
    }
    if (!done) {
      for (const chunk of chunksOf(framer.end())) {
        note(chunk);
        yield chunk;
      }
      if (refused) throw refused.error;
    }
    for (const chunk of decoder.end()) {
      note(chunk);
      yield chunk;
    }
    finished = true;
  } catch (err) {
    if (signal.aborted || isAbort(err)) throw err;
    throw transportError(target.slug, err, 'stream');
  } finally {
    if (input.observed) input.observed.upstreamEnd = performance.now();
    // After the end the rest (the chunked terminator, usually) is drained so the connection returns to the pool,
    // without holding up the caller's end of the stream; otherwise the body is dropped with its connection.
    if (finished) drainAfterEnd(response.body, input.maxFrameBytes);
    else response.body.destroy();
  }
  if (!sawUsage) {
    input.onEstimated();
    const usage = await estimateUsage(request, text.join(''));
    if (input.observed) input.observed.streamUsage = usage;
    yield {
      id: last?.id ?? `chatcmpl-${target.slug}`,
      object: 'chat.completion.chunk',
      created: last?.created ?? Math.floor(Date.now() / 1000),
      model: last?.model ?? target.upstreamModel,
      choices: [],
      usage,
    };
  }
}

const ignore = () => {};

/**
 * Reads what follows a stream's terminator (the chunked encoding's end, usually) so that its connection goes back
 * to the pool; an upstream that sends more than a frame's worth after it loses the connection instead.
 */
function drainAfterEnd(body: UpstreamResponse['body'], maxBytes: number): void {
  let extra = 0;
  body.on('data', (bytes: Buffer) => {
    extra += bytes.length;
    if (extra > maxBytes) body.destroy();
  }).resume();
}
