/** Newline-delimited JSON streams (one JSON document per line), on the shared line decoder. */
import type { StreamEvent } from '../dispatch/provider.ts';
import { LineDecoder } from './sse.ts';

export async function* decodeNdjson(source: AsyncIterable<Uint8Array>): AsyncGenerator<StreamEvent> {
  const lines = new LineDecoder();
  for await (const bytes of source) {
    for (const line of lines.push(bytes)) if (line.trim() !== '') yield { event: '', data: line };
  }
  for (const line of lines.end()) if (line.trim() !== '') yield { event: '', data: line };
}
