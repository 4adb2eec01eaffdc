import type { ChatCompletionChunk, Usage } from '../canonical/chat.ts';
import { toGatewayError, type GatewayError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { StreamStatus, StreamTap } from './context.ts';

/**
 * Passes a canonical stream through, showing each chunk to every tap as it goes by, and tells every tap
 * exactly once how the stream ended: completed, aborted (the consumer stopped reading) or failed.
 */
export async function* tapStream(
  source: AsyncIterable<ChatCompletionChunk>,
  taps: readonly StreamTap[],
  signal: AbortSignal,
  logger: Logger,
): AsyncGenerator<ChatCompletionChunk> {
  let usage: Usage | null = null;
  let chunks = 0;
  let status: StreamStatus = 'aborted';
  let error: GatewayError | undefined;
  try {
    for await (const chunk of source) {
      chunks++;
      if (chunk.usage) usage = chunk.usage;
      for (const tap of taps) {
        try {
          tap.chunk?.(chunk);
        } catch (err) {
          logger.error({ err }, 'stream tap failed on a chunk');
        }
      }
      yield chunk;
    }
    status = 'completed';
  } catch (err) {
    status = signal.aborted ? 'aborted' : 'failed';
    // A client that left is not an error of the stream: only a failure carries one.
    if (status === 'failed') error = toGatewayError(err);
    throw err;
  } finally {
    const outcome = error ? { status, usage, chunks, error } : { status, usage, chunks };
    for (const tap of taps) {
      try {
        tap.complete?.(outcome);
      } catch (err) {
        logger.error({ err }, 'stream tap failed on completion');
      }
    }
  }
}
