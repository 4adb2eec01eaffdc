/**
 * Rows of a binary COPY kept as bytes until they are written, and read back into values where bytes will not do.
 * The usage plugin's records wait up to a second for their batch: as objects they outlived two scavenges and were
 * promoted to the old generation (about 380 of the 580 bytes promoted per request, bench/analysis.md), whose
 * collections then had them to mark and move. Encoded when they are handed in, they leave nothing per record on the
 * JavaScript heap: the rows' offsets are numbers in one array.
 */
import { BinaryCopyWriter, COPY_HEADER_BYTES, type CopyColumnType } from './copy-binary.ts';

/** How a record becomes a row and back: the columns' types, each column's value, and the record a row's values make. */
export interface RowCodec<T> {
  readonly types: readonly CopyColumnType[];
  readonly values: ReadonlyArray<(record: T) => unknown>;
  record(values: unknown[]): T;
}

/** Rows from the head of a queue: their COPY stream, and the records again for what takes records. */
export interface EncodedRows<T> {
  readonly count: number;
  /** A complete COPY stream (header and trailer) in a buffer of its own, which may be transferred. */
  readonly stream: Uint8Array;
  /** The records, decoded from the stream. */
  records(): T[];
}

export class BinaryRowQueue<T> {
  private readonly writer: BinaryCopyWriter;
  /**
   * Where each queued row ends, counted in bytes since the queue began, so that dropping rows changes no entry;
   * `dropped` of those bytes are gone from the writer. The first queued row starts just after the header.
   */
  private readonly ends: number[] = [];
  private dropped = 0;

  constructor(private readonly codec: RowCodec<T>, initialBytes = 64 * 1024) {
    this.writer = new BinaryCopyWriter(initialBytes);
  }

  get length(): number {
    return this.ends.length;
  }

  /** Encodes the record as a row; a value its column cannot hold throws, and nothing of the row is kept. */
  push(record: T): void {
    const { types, values } = this.codec;
    const start = this.writer.size;
    try {
      this.writer.row(types.length);
      for (let c = 0; c < types.length; c++) this.writer.value(types[c]!, values[c]!(record) as never);
    } catch (err) {
      this.writer.truncate(start);
      throw err;
    }
    this.ends.push(this.writer.size + this.dropped);
  }

  /** The first `count` rows (all of them, when fewer are queued). */
  batch(count: number): EncodedRows<T> {
    const n = Math.min(count, this.ends.length);
    const stream = this.writer.streamOf(COPY_HEADER_BYTES, n === 0 ? COPY_HEADER_BYTES : this.ends[n - 1]! - this.dropped);
    const codec = this.codec;
    return { count: n, stream, records: () => readCopyRows(stream, codec.types).map((values) => codec.record(values)) };
  }

  /** Forgets the first `count` rows (written). */
  drop(count: number): void {
    const n = Math.min(count, this.ends.length);
    if (n === 0) return;
    const end = this.ends[n - 1]! - this.dropped;
    this.ends.splice(0, n);
    this.dropped += this.writer.dropBefore(end);
  }

  /** Every queued row as a record, no longer queued. */
  takeAll(): T[] {
    const records = this.batch(this.ends.length).records();
    this.drop(this.ends.length);
    return records;
  }
}

/** Postgres's epoch, 2000-01-01T00:00:00Z, in ms since the Unix epoch. */
const POSTGRES_EPOCH_MS = 946_684_800_000;
const TWO_32 = 2 ** 32;

/**
 * The rows of a binary COPY stream as values, by the columns' types: each value as BinaryCopyWriter takes it (a
 * uuid in its canonical text, a time in ms since the epoch, jsonb as its JSON text, a numeric as the number its
 * digits make); NULL as null. Throws on a stream that is not one.
 */
export function readCopyRows(stream: Uint8Array, types: readonly CopyColumnType[]): unknown[][] {
  const view = new DataView(stream.buffer, stream.byteOffset, stream.byteLength);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const rows: unknown[][] = [];
  let at = COPY_HEADER_BYTES;
  for (;;) {
    const fields = view.getInt16(at);
    at += 2;
    if (fields === -1) break;
    if (fields !== types.length) throw new Error(`readCopyRows: a row of ${fields} fields, for ${types.length} columns`);
    const row: unknown[] = [];
    for (const type of types) {
      const length = view.getInt32(at);
      at += 4;
      if (length === -1) {
        row.push(null);
        continue;
      }
      row.push(valueOf(type, view, at, length, stream, decoder));
      at += length;
    }
    rows.push(row);
  }
  return rows;
}

function valueOf(type: CopyColumnType, view: DataView, at: number, length: number, bytes: Uint8Array, decoder: TextDecoder): unknown {
  switch (type) {
    case 'text': return decoder.decode(bytes.subarray(at, at + length));
    case 'jsonb': return decoder.decode(bytes.subarray(at + 1, at + length));
    case 'uuid': return uuidText(bytes.subarray(at, at + 16));
    case 'timestamptz': return int64(view, at) / 1000 + POSTGRES_EPOCH_MS;
    case 'boolean': return bytes[at] === 1;
    case 'bigint': return int64(view, at);
    case 'integer': return view.getInt32(at);
    case 'float8': return view.getFloat64(at);
    case 'numeric': return numericValue(view, at);
    default: throw new Error(`readCopyRows: no decoding for type ${String(type)}`);
  }
}

function int64(view: DataView, at: number): number {
  return view.getInt32(at) * TWO_32 + view.getUint32(at + 4);
}

function uuidText(bytes: Uint8Array): string {
  const hex = Buffer.from(bytes).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** numeric's binary form (BinaryCopyWriter.numeric) as a number: its base-10000 digits written out in decimal. */
function numericValue(view: DataView, at: number): number {
  const ndigits = view.getInt16(at);
  const weight = view.getInt16(at + 2);
  const sign = view.getUint16(at + 4);
  if (sign === 0xc000) return NaN;
  if (sign === 0xd000) return Infinity;
  if (sign === 0xf000) return -Infinity;
  let text = '';
  for (let i = 0; i < ndigits; i++) text += String(view.getInt16(at + 8 + 2 * i)).padStart(4, '0');
  // The digits are groups of four from 10000^weight down: the exponent of the last digit written.
  const value = ndigits === 0 ? 0 : Number(`${text}e${4 * (weight - ndigits + 1)}`);
  return sign === 0x4000 ? -value : value;
}
