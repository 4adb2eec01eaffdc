/**
 * The one server-sent-events decoder, in layers: bytes -> lines -> events. Provider translators turn
 * events into canonical chunks; nothing else parses SSE. Follows the WHATWG event-stream rules: CR, LF and
 * CRLF line ends (a CRLF may be split across reads), `:` comments, multi-line `data`, a leading BOM.
 */
import { framedEvents, UpstreamTooLargeError, type StreamFramer } from './events.ts';

export interface SseEvent {
  event: string;
  data: string;
  id?: string;
  retry?: number;
}

/** The default of upstream.maxFrameBytes: far above any event a model streams, far below what hurts memory. */
export const DEFAULT_MAX_FRAME_BYTES = 8 * 1024 * 1024;

const LF = 10;
const CR = 13;

/**
 * Bytes -> lines. Keeps the partial line (and a trailing CR) between reads. A line still open after
 * `maxLineBytes` bytes throws UpstreamTooLargeError: an upstream that never ends its line must not fill memory.
 */
export class LineDecoder {
  // TextDecoder drops a leading BOM and holds a multi-byte character split across reads.
  private readonly text = new TextDecoder('utf-8');
  private pending = '';
  private trailingCarriageReturn = false;
  /** Bytes since the last line end, counted on the bytes (CR and LF never occur inside a UTF-8 sequence). */
  private openLineBytes = 0;

  constructor(private readonly maxLineBytes = DEFAULT_MAX_FRAME_BYTES) {}

  push(bytes: Uint8Array): string[] {
    const lastEnd = Math.max(bytes.lastIndexOf(LF), bytes.lastIndexOf(CR));
    this.openLineBytes = lastEnd === -1 ? this.openLineBytes + bytes.length : bytes.length - lastEnd - 1;
    if (this.openLineBytes > this.maxLineBytes) throw new UpstreamTooLargeError('stream frame', this.maxLineBytes);
    return this.split(this.text.decode(bytes, { stream: true }));
  }

  end(): string[] {
    const lines = this.split(this.text.decode());
    if (this.pending !== '') lines.push(this.pending);
    this.pending = '';
    return lines;
  }

  private split(chunk: string): string[] {
    if (chunk.length === 0) return [];
    let i = 0;
    if (this.trailingCarriageReturn) {
      // The LF of a CRLF whose CR ended the previous read: that line was already emitted.
      this.trailingCarriageReturn = false;
      if (chunk.charCodeAt(i) === 10) i++;
    }
    const lines: string[] = [];
    let start = i;
    for (; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      lines.push(this.pending + chunk.slice(start, i));
      this.pending = '';
      if (c === 13) {
        if (i + 1 === chunk.length) this.trailingCarriageReturn = true;
        else if (chunk.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
    }
    this.pending += chunk.slice(start);
    return lines;
  }
}

/** Lines -> events. An event whose data grows past `maxEventBytes` throws UpstreamTooLargeError. */
export class EventDecoder {
  private data: string[] = [];
  private dataBytes = 0;
  private event = '';
  private id: string | undefined;
  private retry: number | undefined;

  constructor(private readonly maxEventBytes = DEFAULT_MAX_FRAME_BYTES) {}

  /** Returns the event a blank line completes, if any. */
  line(line: string): SseEvent | null {
    if (line === '') return this.dispatch();
    if (line.charCodeAt(0) === 58 /* : */) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    switch (field) {
      case 'data':
        // Many short data lines without the blank line that ends the event must not pile up either.
        this.dataBytes += Buffer.byteLength(value) + 1;
        if (this.dataBytes > this.maxEventBytes) throw new UpstreamTooLargeError('stream frame', this.maxEventBytes);
        this.data.push(value);
        break;
      case 'event': this.event = value; break;
      case 'id': if (!value.includes('\0')) this.id = value; break;
      case 'retry': if (/^\d+$/.test(value)) this.retry = Number(value); break;
      default: break;
    }
    return null;
  }

  /** At end of input an event without its blank line is still delivered: upstreams often omit the last one. */
  end(): SseEvent | null {
    return this.dispatch();
  }

  private dispatch(): SseEvent | null {
    if (this.data.length === 0 && this.event === '') return null;
    const event: SseEvent = { event: this.event || 'message', data: this.data.join('\n') };
    if (this.id !== undefined) event.id = this.id;
    if (this.retry !== undefined) event.retry = this.retry;
    this.data = [];
    this.dataBytes = 0;
    this.event = '';
    return event;
  }
}

/** Bytes -> events, pushed by the reader. */
export class SseFramer implements StreamFramer<SseEvent> {
  private readonly lines: LineDecoder;
  private readonly events: EventDecoder;

  constructor(maxFrameBytes = DEFAULT_MAX_FRAME_BYTES) {
    this.lines = new LineDecoder(maxFrameBytes);
    this.events = new EventDecoder(maxFrameBytes);
  }

  push(bytes: Uint8Array): SseEvent[] {
    return this.complete(this.lines.push(bytes));
  }

  end(): SseEvent[] {
    const out = this.complete(this.lines.end());
    const last = this.events.end();
    if (last) out.push(last);
    return out;
  }

  private complete(lines: string[]): SseEvent[] {
    const out: SseEvent[] = [];
    for (const line of lines) {
      const event = this.events.line(line);
      if (event) out.push(event);
    }
    return out;
  }
}

/** Bytes -> events, over any async byte source (an undici body, a Node stream, a test generator). */
export function decodeSse(source: AsyncIterable<Uint8Array>, maxFrameBytes = DEFAULT_MAX_FRAME_BYTES): AsyncGenerator<SseEvent> {
  return framedEvents(new SseFramer(maxFrameBytes), source);
}

/** Encodes one `data:` event; a named event gets its `event:` line first. */
export function encodeSse(data: string, event?: string): string {
  const head = event ? `event: ${event}\n` : '';
  if (!data.includes('\n')) return `${head}data: ${data}\n\n`;
  return `${head}${data.split('\n').map((l) => `data: ${l}`).join('\n')}\n\n`;
}
