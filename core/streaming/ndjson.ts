/** Newline-delimited JSON streams (one JSON document per line), on the shared line decoder. */
import type { StreamEvent } from './events.ts';
import { DEFAULT_MAX_FRAME_BYTES, LineDecoder } from './sse.ts';

/** A line longer than `maxFrameBytes` throws UpstreamTooLargeError before it is held whole. */
export async function* decodeNdjson(source: AsyncIterable<Uint8Array>, maxFrameBytes = DEFAULT_MAX_FRAME_BYTES): AsyncGenerator<StreamEvent> {
  const lines = new LineDecoder(maxFrameBytes);
  for await (const bytes of source) {
    for (const line of lines.push(bytes)) if (line.trim() !== '') yield { event: '', data: line };
  }
  for (const line of lines.end()) if (line.trim() !== '') yield { event: '', data: line };
}
