/**
 * A bulk append in Postgres's binary COPY format (`COPY ... WITH (FORMAT binary)`): the database reads each value
 * as it is stored instead of parsing its text, about half of the embedded database's per-row cost of the same rows
 * as CSV on a table without indexes (bench/analysis.md, tenth step). Its own file because the plugin contract names
 * it (core/pipeline/services.ts) and may reach no other store file.
 */
export type CopyBinary = (table: string, columns: readonly string[], data: Uint8Array) => Promise<void>;

/** The column types BinaryCopyWriter encodes, by their Postgres names. */
export type CopyColumnType = 'text' | 'jsonb' | 'uuid' | 'timestamptz' | 'boolean' | 'bigint' | 'integer' | 'float8' | 'numeric';

/** What a value of each type is given as; null (or undefined) writes SQL NULL. */
export interface CopyValues {
  text: string;
  /** JSON text. */
  jsonb: string;
  /** The canonical form, 8-4-4-4-12 hex digits. */
  uuid: string;
  /** Milliseconds since the epoch (fractions to the microsecond). */
  timestamptz: number;
  boolean: boolean;
  /** A safe integer. */
  bigint: number;
  integer: number;
  float8: number;
  /** The decimal value of the number's shortest representation, as `String(n)` would write it. */
  numeric: number;
}

/** "PGCOPY\n\377\r\n\0", then the flags field and the header extension's length, both 0. */
const HEADER = [0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0];
/** Bytes before a stream's first row: where a writer's first row starts. */
export const COPY_HEADER_BYTES = HEADER.length;
/** Postgres's epoch, 2000-01-01T00:00:00Z, in microseconds since the Unix epoch. */
const POSTGRES_EPOCH_US = 946_684_800_000_000;
const TWO_32 = 2 ** 32;
/** A writer whose rows are dropped (dropBefore) gives memory back only above this size. */
const SHRINK_ABOVE_BYTES = 4 * 1024 * 1024;
const NUMERIC_POS = 0x0000;
const NUMERIC_NEG = 0x4000;
const NUMERIC_NAN = 0xc000;
const NUMERIC_PINF = 0xd000;
const NUMERIC_NINF = 0xf000;

/**
 * Writes one COPY stream: `row(n)`, then n values, for every row; `finish()` ends it. A value that its column's
 * type cannot hold throws (as the database would refuse it in text), so a bad value fails its batch here. Bytes are
 * written one by one rather than through Buffer's methods: this runs on the event loop for every usage record, and
 * the methods' argument checks cost more than the writes.
 */
export class BinaryCopyWriter {
  private buffer: Buffer;
  private at = 0;
  private finished = false;

  constructor(initialBytes = 16 * 1024) {
    this.buffer = Buffer.alloc(Math.max(initialBytes, HEADER.length + 2));
    for (const byte of HEADER) this.buffer[this.at++] = byte;
  }

  /** Starts a row of `fields` values. */
  row(fields: number): void {
    if (this.finished) throw new Error('BinaryCopyWriter: the stream is finished');
    this.reserve(2);
    this.int16(fields);
  }

  /** One value of `type`; null or undefined is SQL NULL. */
  value<T extends CopyColumnType>(type: T, value: CopyValues[T] | null | undefined): void {
    if (value === null || value === undefined) return this.null();
    switch (type) {
      case 'text': return this.text(value as string);
      case 'jsonb': return this.jsonb(value as string);
      case 'uuid': return this.uuid(value as string);
      case 'timestamptz': return this.timestamptz(value as number);
      case 'boolean': return this.boolean(value as boolean);
      case 'bigint': return this.bigint(value as number);
      case 'integer': return this.integer(value as number);
      case 'float8': return this.float8(value as number);
      case 'numeric': return this.numeric(value as number);
      default: throw new Error(`BinaryCopyWriter: no encoding for type ${String(type)}`);
    }
  }

  null(): void {
    this.reserve(4);
    this.int32(-1);
  }

  text(value: string): void {
    this.utf8(value, 0);
  }

  /** jsonb's binary form: a version byte (1), then the JSON text, which the database parses. */
  jsonb(value: string): void {
    this.utf8(value, 1);
  }

  uuid(value: string): void {
    this.reserve(20);
    const start = this.at;
    this.int32(16);
    const b = this.buffer;
    let bad = value.length !== 36 || value.charCodeAt(8) !== 0x2d || value.charCodeAt(13) !== 0x2d || value.charCodeAt(18) !== 0x2d || value.charCodeAt(23) !== 0x2d;
    for (let k = 0; k < 16 && !bad; k++) {
      const i = UUID_BYTE_AT[k]!;
      const high = hexValue(value.charCodeAt(i));
      const low = hexValue(value.charCodeAt(i + 1));
      bad = (high | low) < 0;
      b[this.at++] = (high << 4) | low;
    }
    if (bad) {
      this.at = start;
      throw new TypeError(`BinaryCopyWriter: ${JSON.stringify(value)} is not a UUID`);
    }
  }

  timestamptz(epochMs: number): void {
    const us = Math.round(epochMs * 1000) - POSTGRES_EPOCH_US;
    if (!Number.isSafeInteger(us)) throw new RangeError(`BinaryCopyWriter: ${epochMs} is not a time`);
    this.int64(us);
  }

  boolean(value: boolean): void {
    this.reserve(5);
    this.int32(1);
    this.buffer[this.at++] = value ? 1 : 0;
  }

  bigint(value: number): void {
    if (!Number.isSafeInteger(value)) throw new RangeError(`BinaryCopyWriter: ${value} is not a bigint`);
    this.int64(value);
  }

  integer(value: number): void {
    if (!Number.isInteger(value) || value < -(2 ** 31) || value >= 2 ** 31) throw new RangeError(`BinaryCopyWriter: ${value} is not an integer`);
    this.reserve(8);
    this.int32(4);
    this.int32(value);
  }

  float8(value: number): void {
    this.reserve(12);
    this.int32(8);
    this.at = this.buffer.writeDoubleBE(value, this.at);
  }

  /** numeric's binary form: base-10000 digits with a weight, a sign and the display scale numeric_in would give the text. */
  numeric(value: number): void {
    if (!Number.isFinite(value)) {
      this.reserve(12);
      this.numericHeader(0, 0, Number.isNaN(value) ? NUMERIC_NAN : value > 0 ? NUMERIC_PINF : NUMERIC_NINF, 0);
      return;
    }
    const text = String(Math.abs(value));
    const e = text.indexOf('e');
    const end = e === -1 ? text.length : e;
    const exponent = e === -1 ? 0 : Number(text.slice(e + 1));
    const point = text.indexOf('.');
    const digitCount = point === -1 || point > end ? end : end - 1;
    // Where the decimal point falls among the digits, counted from their left (negative: zeros after the point).
    const pointAt = (point === -1 || point > end ? end : point) + exponent;
    const dscale = Math.max(0, digitCount - pointAt);
    // Digits are grouped by four from the decimal point: `left` zeros pad the first group.
    const left = (((-pointAt) % 4) + 4) % 4;
    const groupCount = Math.ceil((left + digitCount) / 4);
    this.reserve(12 + 2 * groupCount);
    const start = this.at;
    this.at += 12;
    let weight = (pointAt + left) / 4 - 1;
    let kept = 0;
    let trailingZeros = 0;
    let digit = -left;
    for (let g = 0; g < groupCount; g++) {
      let group = 0;
      for (let k = 0; k < 4; k++, digit++) {
        group *= 10;
        if (digit >= 0 && digit < digitCount) group += text.charCodeAt(digit < (point === -1 ? end : point) ? digit : digit + 1) - 0x30;
      }
      if (kept === 0 && group === 0) { weight--; continue; } // leading zero groups are not written
      this.int16(group);
      kept++;
      trailingZeros = group === 0 ? trailingZeros + 1 : 0;
    }
    kept -= trailingZeros;
    this.at -= 2 * trailingZeros;
    const after = this.at;
    this.at = start;
    this.numericHeader(kept, kept === 0 ? 0 : weight, value < 0 && kept > 0 ? NUMERIC_NEG : NUMERIC_POS, dscale);
    this.at = after;
  }

  /** Bytes written so far, the header's included: where the next row starts. */
  get size(): number {
    return this.at;
  }

  /** Forgets what was written from `offset` (a size read earlier) on: a row given up halfway, say. */
  truncate(offset: number): void {
    if (this.finished) throw new Error('BinaryCopyWriter: the stream is finished');
    if (offset < HEADER.length || offset > this.at) throw new RangeError(`BinaryCopyWriter: no offset ${offset} to truncate at`);
    this.at = offset;
  }

  /**
   * Forgets the rows before `offset` (a row's start): those from it on move to just after the header, and later
   * offsets move back by the returned number of bytes.
   */
  dropBefore(offset: number): number {
    if (this.finished) throw new Error('BinaryCopyWriter: the stream is finished');
    if (offset < HEADER.length || offset > this.at) throw new RangeError(`BinaryCopyWriter: no offset ${offset} to drop before`);
    const moved = offset - HEADER.length;
    if (moved > 0) this.buffer.copyWithin(HEADER.length, offset, this.at);
    this.at -= moved;
    // A backlog (a database that refused writes for a while) made it large: its memory goes once the rows do.
    if (this.buffer.length > SHRINK_ABOVE_BYTES && this.at < this.buffer.length / 4) {
      const smaller = Buffer.alloc(Math.max(SHRINK_ABOVE_BYTES, this.at * 2));
      this.buffer.copy(smaller, 0, 0, this.at);
      this.buffer = smaller;
    }
    return moved;
  }

  /** The rows between two offsets as a stream of their own (header and trailer), in a buffer of its own. */
  streamOf(from: number, to: number): Uint8Array {
    if (from < HEADER.length || to < from || to > this.at) throw new RangeError(`BinaryCopyWriter: no rows between ${from} and ${to}`);
    const out = new Uint8Array(HEADER.length + (to - from) + 2);
    out.set(this.buffer.subarray(0, HEADER.length));
    out.set(this.buffer.subarray(from, to), HEADER.length);
    out[out.length - 2] = 0xff;
    out[out.length - 1] = 0xff;
    return out;
  }

  /** The finished stream (the trailer written); the writer takes no more rows. */
  finish(): Uint8Array {
    if (!this.finished) {
      this.reserve(2);
      this.int16(-1);
      this.finished = true;
    }
    return this.buffer.subarray(0, this.at);
  }

  /** The length and the four header fields of a numeric whose `ndigits` digits follow. */
  private numericHeader(ndigits: number, weight: number, sign: number, dscale: number): void {
    this.int32(8 + 2 * ndigits);
    this.int16(ndigits);
    this.int16(weight);
    this.int16(sign);
    this.int16(dscale);
  }

  private int64(value: number): void {
    this.reserve(12);
    this.int32(8);
    const high = Math.floor(value / TWO_32);
    this.int32(high);
    this.int32(value - high * TWO_32);
  }

  /** The low 32 bits of `value`, big-endian; room must be reserved. */
  private int32(value: number): void {
    const b = this.buffer;
    b[this.at] = value >>> 24;
    b[this.at + 1] = value >>> 16;
    b[this.at + 2] = value >>> 8;
    b[this.at + 3] = value;
    this.at += 4;
  }

  private int16(value: number): void {
    this.buffer[this.at] = value >>> 8;
    this.buffer[this.at + 1] = value;
    this.at += 2;
  }

  /** A length-prefixed UTF-8 value, after `version` when it is not 0 (jsonb's). */
  private utf8(value: string, version: number): void {
    // At most 3 bytes per UTF-16 unit: a surrogate pair (2 units) is 4 bytes.
    this.reserve(5 + 3 * value.length);
    const start = this.at;
    this.at += 4;
    if (version !== 0) this.buffer[this.at++] = version;
    const b = this.buffer;
    let i = 0;
    // ASCII byte by byte (ids, names, models): a call into Buffer's encoder costs more for short text.
    for (; i < value.length; i++) {
      const code = value.charCodeAt(i);
      if (code >= 0x80) break;
      b[this.at++] = code;
    }
    if (i < value.length) this.at += b.write(i === 0 ? value : value.slice(i), this.at, 'utf8');
    const length = this.at - start - 4;
    this.at = start;
    this.int32(length);
    this.at = start + 4 + length;
  }

  private reserve(bytes: number): void {
    if (this.at + bytes <= this.buffer.length) return;
    const grown = Buffer.alloc(Math.max(this.buffer.length * 2, this.at + bytes));
    this.buffer.copy(grown, 0, 0, this.at);
    this.buffer = grown;
  }
}

/** Where each of a UUID's 16 bytes starts in its 8-4-4-4-12 text. */
const UUID_BYTE_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/** Hex digits' values by character code, -1 for every other ASCII character. */
const HEX_VALUES = Int8Array.from({ length: 128 }, (_, code) => {
  const digit = '0123456789abcdef'.indexOf(String.fromCharCode(code).toLowerCase());
  return digit;
});

/** A hex digit's value, -1 for any other character. */
function hexValue(code: number): number {
  return code < 128 ? HEX_VALUES[code]! : -1;
}
