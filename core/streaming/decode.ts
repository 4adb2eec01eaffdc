/** The upstream stream framings a provider may declare, each decoded by its own layered decoder. */
import type { StreamEvent, StreamFormat } from './events.ts';
import { decodeAwsEventStream } from './aws-eventstream.ts';
import { decodeNdjson } from './ndjson.ts';
import { decodeSse, DEFAULT_MAX_FRAME_BYTES } from './sse.ts';

type Decoder = (source: AsyncIterable<Uint8Array>, maxFrameBytes: number) => AsyncIterable<StreamEvent>;

const decoders: Record<StreamFormat, Decoder> = {
  sse: decodeSse,
  ndjson: decodeNdjson,
  'aws-eventstream': decodeAwsEventStream,
};

/** A frame (line, event, message) larger than `maxFrameBytes` throws UpstreamTooLargeError as soon as it is. */
export function decodeStream(format: StreamFormat, source: AsyncIterable<Uint8Array>, maxFrameBytes = DEFAULT_MAX_FRAME_BYTES): AsyncIterable<StreamEvent> {
  return decoders[format](source, maxFrameBytes);
}
