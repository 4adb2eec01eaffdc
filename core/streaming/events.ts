/** One upstream stream event, whatever the framing: SSE events, JSON lines, AWS event-stream messages. */
export interface StreamEvent {
  /** The SSE event name (`message` when unnamed), the AWS `:event-type`, or '' for JSON lines. */
  event: string;
  /** The event's data as text (JSON for every provider so far). */
  data: string;
}

/**
 * A framing's decoder driven by its reader: bytes in, the events they complete out. The dispatcher calls it inside
 * its own read loop, so an event costs no asynchronous step of its own.
 */
export interface StreamFramer<E extends StreamEvent = StreamEvent> {
  push(bytes: Uint8Array): E[];
  /** At the end of input: the events still open, or a throw when the framing was cut inside one. */
  end(): E[];
}

/** The events of an async byte source, through a framer. */
export async function* framedEvents<E extends StreamEvent>(framer: StreamFramer<E>, source: AsyncIterable<Uint8Array>): AsyncGenerator<E> {
  for await (const bytes of source) yield* framer.push(bytes);
  yield* framer.end();
}

/** How a provider frames its streams: one decoder per format in core/streaming/. */
export type StreamFormat = 'sse' | 'ndjson' | 'aws-eventstream';

/**
 * An upstream answer past a size limit: one stream frame (upstream.maxFrameBytes) or a whole non-streamed body
 * (upstream.maxBodyBytes). Thrown by the readers as soon as the limit is crossed, before more is read.
 */
export class UpstreamTooLargeError extends Error {
  constructor(readonly what: 'stream frame' | 'body', readonly limitBytes: number) {
    super(`upstream ${what} exceeds ${limitBytes} bytes`);
  }
}
