/** The upstream stream framings a provider may declare, each decoded by its own layered decoder. */
import { AwsEventStreamFramer } from './aws-eventstream.ts';
import { framedEvents, type StreamEvent, type StreamFormat, type StreamFramer } from './events.ts';
import { NdjsonFramer } from './ndjson.ts';
import { DEFAULT_MAX_FRAME_BYTES, SseFramer } from './sse.ts';

const framers: Record<StreamFormat, new (maxFrameBytes: number) => StreamFramer> = {
  sse: SseFramer,
  ndjson: NdjsonFramer,
  'aws-eventstream': AwsEventStreamFramer,
};

/** A frame (line, event, message) larger than `maxFrameBytes` throws UpstreamTooLargeError as soon as it is. */
export function streamFramer(format: StreamFormat, maxFrameBytes = DEFAULT_MAX_FRAME_BYTES): StreamFramer {
  return new framers[format](maxFrameBytes);
}

/** The events of an async byte source in the given framing. */
export function decodeStream(format: StreamFormat, source: AsyncIterable<Uint8Array>, maxFrameBytes = DEFAULT_MAX_FRAME_BYTES): AsyncIterable<StreamEvent> {
  return framedEvents(streamFramer(format, maxFrameBytes), source);
}
