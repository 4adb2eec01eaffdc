/**
 * An upstream stream -> canonical chunks, with usage at the end of every stream: when the provider reported
 * none, a last chunk carries an estimate (and the request is marked as estimated).
 */
import type { ChatCompletionChunk, ChatCompletionRequest } from '../canonical/chat.ts';
import { estimateUsage } from '../canonical/estimate.ts';
import { decodeStream } from '../streaming/decode.ts';
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
    decoding: for await (const event of decodeStream(chat.streamFormat, response.body, input.maxFrameBytes)) {
      const { chunks, done } = decoder.event(event);
      for (const chunk of chunks) {
        note(chunk);
        yield chunk;
      }
      if (done) break decoding;
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
    // After the end the rest is drained so the connection returns to the pool; otherwise it is dropped.
    if (finished) await response.body.dump().catch(() => {});
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
