/** Newline-delimited JSON streams (one JSON document per line), on the shared line decoder. */
import { framedEvents, type StreamEvent, type StreamFramer } from './events.ts';
import { DEFAULT_MAX_FRAME_BYTES, LineDecoder } from './sse.ts';

/** Bytes -> one event per non-blank line, pushed by the reader. */
export class NdjsonFramer implements StreamFramer {
  private readonly lines: LineDecoder;

  constructor(maxFrameBytes = DEFAULT_MAX_FRAME_BYTES) {
    this.lines = new LineDecoder(maxFrameBytes);
  }

  push(bytes: Uint8Array): StreamEvent[] {
    return eventsOf(this.lines.push(bytes));
  }

  end(): StreamEvent[] {
    return eventsOf(this.lines.end());
  }
}

function eventsOf(lines: string[]): StreamEvent[] {
  const out: StreamEvent[] = [];
  for (const line of lines) if (line.trim() !== '') out.push({ event: '', data: line });
  return out;
}

/** A line longer than `maxFrameBytes` throws UpstreamTooLargeError before it is held whole. */
export function decodeNdjson(source: AsyncIterable<Uint8Array>, maxFrameBytes = DEFAULT_MAX_FRAME_BYTES): AsyncGenerator<StreamEvent> {
  return framedEvents(new NdjsonFramer(maxFrameBytes), source);
}
