/**
 * A text/event-stream answer written by the gateway itself. Koa would wrap the events in a Readable and pipe it into
 * the response with stream.pipeline: per stream an AbortController, end-of-stream listeners on both ends and, when it
 * finishes, an AbortError with its stack trace, and per event a push, a 'data' event and a tick. Here each event is
 * one res.write, with the same backpressure (wait for 'drain') and the same end when the client leaves (the events'
 * iterator is returned, so the stream stages' finally blocks run and usage is recorded).
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from '../logger.ts';

/** ctx.body while the middleware chain unwinds; requestContext writes it once every middleware has returned. */
export class EventStreamBody {
  constructor(readonly events: AsyncIterable<string>) {}

  /** The answer was replaced (an error after respond()): the events are never read, and their producers end. */
  discard(logger: Logger, requestId: string): void {
    void endEvents(this.events[Symbol.asyncIterator](), logger, requestId);
  }
}

/**
 * Returns the events' iterator early: the producers' finally blocks (usage, the upstream's release) run, and one
 * that throws is logged, not lost.
 */
async function endEvents(iterator: AsyncIterator<string>, logger: Logger, requestId: string): Promise<void> {
  try {
    await iterator.return?.();
  } catch (err) {
    logger.warn({ err, requestId }, 'ending an event stream failed');
  }
}

/** Writes every event, then ends the response; resolves when the events end or the client has gone. */
export async function writeEventStream(res: ServerResponse, events: AsyncIterable<string>, logger: Logger, requestId: string): Promise<void> {
  const iterator = events[Symbol.asyncIterator]();
  let gone = res.destroyed;
  let wake: (() => void) | undefined;
  const onClose = () => {
    gone = true;
    wake?.();
  };
  const onDrain = () => wake?.();
  res.once('close', onClose);
  res.on('drain', onDrain);
  let finished = false;
  try {
    while (!gone) {
      const next = await iterator.next();
      if (next.done) {
        finished = true;
        break;
      }
      if (gone) break;
      if (!res.write(next.value)) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    }
    if (finished && !gone) res.end();
  } catch (err) {
    finished = true; // a throwing iterator is done
    // Headers and events are out: the only way left to tell the client is to cut the connection mid-stream.
    logger.warn({ err, requestId }, 'event stream failed after the response started');
    res.destroy(err as Error);
  } finally {
    res.off('close', onClose);
    res.off('drain', onDrain);
    if (!finished) await endEvents(iterator, logger, requestId);
  }
}
