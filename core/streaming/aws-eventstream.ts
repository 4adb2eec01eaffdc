/**
 * The AWS event-stream binary framing (application/vnd.amazon.eventstream), in layers: bytes -> messages ->
 * events. A message is a 12-byte prelude (total length, headers length, prelude CRC32), the headers, the payload
 * and a CRC32 of everything before it; both checksums are verified.
 */
import { crc32 } from 'node:zlib';
import { framedEvents, UpstreamTooLargeError, type StreamEvent, type StreamFramer } from './events.ts';
import { DEFAULT_MAX_FRAME_BYTES } from './sse.ts';

export interface EventStreamMessage {
  headers: Record<string, string | number | boolean | Uint8Array>;
  payload: Uint8Array;
}

export class EventStreamFramingError extends Error {}

const PRELUDE = 12;
const CHECKSUM = 4;

/**
 * Bytes -> messages. Keeps a partial message between reads; a message's payload is a view of the read. A message
 * that declares more than `maxMessageBytes` throws UpstreamTooLargeError from its prelude, before it is read.
 */
export class MessageDecoder {
  /** The reads not decoded yet, joined only once the message at their head is complete. */
  private pieces: Uint8Array[] = [];
  private size = 0;
  /** What the head message needs before it can be decoded: its prelude, then its whole length. */
  private wanted = PRELUDE;

  constructor(private readonly maxMessageBytes = DEFAULT_MAX_FRAME_BYTES) {}

  push(bytes: Uint8Array): EventStreamMessage[] {
    if (bytes.length === 0) return [];
    this.pieces.push(bytes);
    this.size += bytes.length;
    if (this.size < this.wanted) {
      // A read kept for later must not alias the caller's bytes, which it may reuse.
      this.pieces[this.pieces.length - 1] = bytes.slice();
      return [];
    }
    let buffer = this.pieces.length === 1 ? bytes : concat(this.pieces, this.size);
    this.pieces = [];
    this.size = 0;
    this.wanted = PRELUDE;
    const messages: EventStreamMessage[] = [];
    while (buffer.length >= PRELUDE) {
      const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
      const total = view.getUint32(0);
      const headersLength = view.getUint32(4);
      if (crc32(buffer.subarray(0, 8)) !== view.getUint32(8)) throw new EventStreamFramingError('event-stream prelude checksum mismatch');
      if (total < PRELUDE + CHECKSUM + headersLength) throw new EventStreamFramingError(`event-stream message length ${total} is invalid`);
      if (total > this.maxMessageBytes) throw new UpstreamTooLargeError('stream frame', this.maxMessageBytes);
      if (buffer.length < total) {
        this.wanted = total;
        break;
      }
      const message = buffer.subarray(0, total);
      if (crc32(message.subarray(0, total - CHECKSUM)) !== view.getUint32(total - CHECKSUM)) {
        throw new EventStreamFramingError('event-stream message checksum mismatch');
      }
      messages.push({
        headers: decodeHeaders(message.subarray(PRELUDE, PRELUDE + headersLength)),
        payload: message.subarray(PRELUDE + headersLength, total - CHECKSUM),
      });
      buffer = buffer.subarray(total);
    }
    if (buffer.length > 0) {
      this.pieces = [buffer.buffer === bytes.buffer ? buffer.slice() : buffer];
      this.size = buffer.length;
    }
    return messages;
  }

  end(): void {
    if (this.size > 0) throw new EventStreamFramingError(`event-stream ended inside a message (${this.size} bytes left)`);
  }
}

function concat(pieces: Uint8Array[], size: number): Uint8Array {
  const joined = new Uint8Array(size);
  let at = 0;
  for (const piece of pieces) {
    joined.set(piece, at);
    at += piece.length;
  }
  return joined;
}

const text = new TextDecoder();

function decodeHeaders(bytes: Uint8Array): EventStreamMessage['headers'] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headers: EventStreamMessage['headers'] = {};
  let at = 0;
  const need = (n: number) => {
    if (at + n > bytes.length) throw new EventStreamFramingError('event-stream header runs past its block');
  };
  while (at < bytes.length) {
    need(1);
    const nameLength = view.getUint8(at);
    at += 1;
    need(nameLength + 1);
    const name = text.decode(bytes.subarray(at, at + nameLength));
    at += nameLength;
    const type = view.getUint8(at);
    at += 1;
    switch (type) {
      case 0: headers[name] = true; break;
      case 1: headers[name] = false; break;
      case 2: need(1); headers[name] = view.getInt8(at); at += 1; break;
      case 3: need(2); headers[name] = view.getInt16(at); at += 2; break;
      case 4: need(4); headers[name] = view.getInt32(at); at += 4; break;
      case 5: case 8: need(8); headers[name] = Number(view.getBigInt64(at)); at += 8; break;
      case 6: case 7: {
        need(2);
        const length = view.getUint16(at);
        at += 2;
        need(length);
        const value = bytes.subarray(at, at + length);
        headers[name] = type === 7 ? text.decode(value) : value;
        at += length;
        break;
      }
      case 9: need(16); headers[name] = bytes.subarray(at, at + 16); at += 16; break;
      default: throw new EventStreamFramingError(`event-stream header ${name} has unknown type ${type}`);
    }
  }
  return headers;
}

/**
 * Bytes -> events. An `event` message gives its `:event-type`; an `exception` (or `error`) message gives
 * `exception:<type>`, for the translator to turn into an error. The payload is passed on as text.
 */
export class AwsEventStreamFramer implements StreamFramer {
  private readonly messages: MessageDecoder;
  private readonly utf8 = new TextDecoder();

  constructor(maxFrameBytes = DEFAULT_MAX_FRAME_BYTES) {
    this.messages = new MessageDecoder(maxFrameBytes);
  }

  push(bytes: Uint8Array): StreamEvent[] {
    return this.messages.push(bytes).map((message) => {
      const kind = message.headers[':message-type'];
      const data = this.utf8.decode(message.payload);
      if (kind === 'exception') return { event: `exception:${String(message.headers[':exception-type'] ?? 'unknown')}`, data };
      if (kind === 'error') return { event: `exception:${String(message.headers[':error-code'] ?? 'unknown')}`, data: data || String(message.headers[':error-message'] ?? '') };
      return { event: String(message.headers[':event-type'] ?? ''), data };
    });
  }

  end(): StreamEvent[] {
    this.messages.end();
    return [];
  }
}

export function decodeAwsEventStream(source: AsyncIterable<Uint8Array>, maxFrameBytes = DEFAULT_MAX_FRAME_BYTES): AsyncGenerator<StreamEvent> {
  return framedEvents(new AwsEventStreamFramer(maxFrameBytes), source);
}

/** Encodes one message (tests, and fakes speaking this format). String headers only, as event streams use. */
export function encodeEventStreamMessage(headers: Record<string, string>, payload: Uint8Array | string): Uint8Array {
  const body = typeof payload === 'string' ? new TextEncoder().encode(payload) : payload;
  const headerParts: number[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const n = new TextEncoder().encode(name);
    const v = new TextEncoder().encode(value);
    headerParts.push(n.length, ...n, 7, v.length >> 8, v.length & 0xff, ...v);
  }
  const total = PRELUDE + headerParts.length + body.length + CHECKSUM;
  const message = new Uint8Array(total);
  const view = new DataView(message.buffer);
  view.setUint32(0, total);
  view.setUint32(4, headerParts.length);
  view.setUint32(8, crc32(message.subarray(0, 8)));
  message.set(headerParts, PRELUDE);
  message.set(body, PRELUDE + headerParts.length);
  view.setUint32(total - CHECKSUM, crc32(message.subarray(0, total - CHECKSUM)));
  return message;
}
