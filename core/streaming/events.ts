/** One upstream stream event, whatever the framing: SSE events, JSON lines, AWS event-stream messages. */
export interface StreamEvent {
  /** The SSE event name (`message` when unnamed), the AWS `:event-type`, or '' for JSON lines. */
  event: string;
  /** The event's data as text (JSON for every provider so far). */
  data: string;
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
