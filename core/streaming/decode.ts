/** The upstream stream framings a provider may declare, each decoded by its own layered decoder. */
import type { StreamEvent, StreamFormat } from '../dispatch/provider.ts';
import { decodeAwsEventStream } from './aws-eventstream.ts';
import { decodeNdjson } from './ndjson.ts';
import { decodeSse } from './sse.ts';

const decoders: Record<StreamFormat, (source: AsyncIterable<Uint8Array>) => AsyncIterable<StreamEvent>> = {
  sse: decodeSse,
  ndjson: decodeNdjson,
  'aws-eventstream': decodeAwsEventStream,
};

export function decodeStream(format: StreamFormat, source: AsyncIterable<Uint8Array>): AsyncIterable<StreamEvent> {
  return decoders[format](source);
}
