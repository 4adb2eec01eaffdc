/**
 * COPY rows kept as bytes (BinaryRowQueue) and read back (readCopyRows): every value the writer takes comes back as
 * it went in, batches are the head's rows whatever was pushed or dropped around them, and a row whose value its
 * column cannot hold leaves nothing behind.
 */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { BinaryCopyWriter, type CopyColumnType } from '../../core/store/copy-binary.ts';
import { BinaryRowQueue, readCopyRows, type RowCodec } from '../../core/store/copy-binary-rows.ts';
import { openDatabase, type Database } from '../../core/store/database.ts';
import { freshDataDir } from '../helpers/data-dir.ts';

const TYPES: CopyColumnType[] = ['uuid', 'text', 'timestamptz', 'boolean', 'bigint', 'integer', 'float8', 'numeric', 'jsonb'];

/** One value of each type per row, awkward ones included; null in every column once. */
const ROWS: unknown[][] = [
  ['0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', 'plain', Date.parse('2026-11-27T10:00:00.123Z'), true, 0, 0, 0, 0, '{}'],
  ['ffffffff-ffff-ffff-ffff-ffffffffffff', 'a,b "q"\n\\N\r\n\t', Date.parse('1999-12-31T23:59:59.999Z'), false, -1, -(2 ** 31), -0.5, -0.000123, '{"a":[1,"x"]}'],
  ['00000000-0000-0000-0000-000000000000', 'modèle 模型 \u{1F600}', 1764240000123.5, true, Number.MAX_SAFE_INTEGER, 2 ** 31 - 1, 1e-300, 12.345678901234, '[{"guard":"pii"}]'],
  ['12345678-9abc-def0-1234-56789abcdef0', '', 0, false, Number.MIN_SAFE_INTEGER, 7, Number.MAX_VALUE, 7.2e-7, '"text"'],
  ['12345678-9abc-def0-1234-56789abcdef1', 'x', 1, true, 9007199254740990, 1, Infinity, 1e21, 'null'],
  ['12345678-9abc-def0-1234-56789abcdef2', 'y', 2, true, 10000, 1, -Infinity, 100000001, '1'],
  ['12345678-9abc-def0-1234-56789abcdef3', 'z', 3, true, 1, 1, NaN, NaN, '2'],
  ['12345678-9abc-def0-1234-56789abcdef4', 'w', 4, true, 1, 1, 1, Infinity, '3'],
  ['12345678-9abc-def0-1234-56789abcdef5', 'v', 5, true, 1, 1, 1, -Infinity, '4'],
  [null, null, null, null, null, null, null, null, null],
];

interface Row { values: unknown[] }

const codec: RowCodec<Row> = {
  types: TYPES,
  values: TYPES.map((_, c) => (row: Row) => row.values[c]),
  record: (values) => ({ values }),
};

function numbered(n: number): Row {
  return { values: [`00000000-0000-0000-0000-${String(n).padStart(12, '0')}`, `row ${n} ${'é'.repeat(n % 7)}`, 1_700_000_000_000 + n, n % 2 === 0, n, n, n / 3, n / 7, `{"n":${n}}`] };
}

describe('readCopyRows', () => {
  test('reads back every value BinaryCopyWriter wrote, of every type, and NULL', () => {
    const writer = new BinaryCopyWriter(1);
    for (const row of ROWS) {
      writer.row(TYPES.length);
      row.forEach((value, c) => writer.value(TYPES[c]!, value as never));
    }
    assert.deepEqual(readCopyRows(writer.finish(), TYPES), ROWS);
  });

  test('refuses a stream whose rows have another number of fields', () => {
    const writer = new BinaryCopyWriter();
    writer.row(1);
    writer.text('one');
    assert.throws(() => readCopyRows(writer.finish(), TYPES), /a row of 1 fields, for 9 columns/);
  });
});

describe('BinaryRowQueue', () => {
  test('a batch is the head rows, as one stream; dropped rows are gone and later rows keep their values', () => {
    const queue = new BinaryRowQueue(codec, 64);
    for (let n = 0; n < 10; n++) queue.push(numbered(n));
    assert.equal(queue.length, 10);
    const first = queue.batch(4);
    assert.equal(first.count, 4);
    // Pushed while the first batch is being written: it joins the tail.
    queue.push(numbered(10));
    assert.deepEqual(first.records(), [0, 1, 2, 3].map(numbered));
    queue.drop(4);
    assert.equal(queue.length, 7);
    assert.deepEqual(queue.batch(3).records(), [4, 5, 6].map(numbered));
    // More than is queued: all of it.
    const rest = queue.batch(100);
    assert.equal(rest.count, 7);
    assert.deepEqual(readCopyRows(rest.stream, TYPES), [4, 5, 6, 7, 8, 9, 10].map((n) => numbered(n).values));
    queue.drop(2);
    for (let n = 11; n < 300; n++) queue.push(numbered(n));
    queue.drop(5);
    assert.deepEqual(queue.takeAll(), Array.from({ length: 289 }, (_, i) => numbered(i + 11)));
    assert.equal(queue.length, 0);
    assert.deepEqual(queue.batch(10).records(), []);
  });

  test('a row with a value its column cannot hold throws and leaves nothing of itself', () => {
    const queue = new BinaryRowQueue(codec);
    queue.push(numbered(1));
    const bad = numbered(2);
    bad.values[4] = 1.5; // not a bigint, after four values were written
    assert.throws(() => queue.push(bad), /1.5 is not a bigint/);
    queue.push(numbered(3));
    assert.equal(queue.length, 2);
    assert.deepEqual(queue.batch(2).records(), [numbered(1), numbered(3)]);
  });

  test('a backlog\'s memory goes with its rows, and the rows left keep their values', () => {
    const queue = new BinaryRowQueue(codec);
    const large = (n: number): Row => {
      const row = numbered(n);
      row.values[1] = `${n} ${'x'.repeat(1000)}`;
      return row;
    };
    for (let n = 0; n < 10_000; n++) queue.push(large(n)); // about 10 MB, past the size the writer gives back
    queue.drop(9_990);
    queue.push(large(10_000));
    assert.deepEqual(queue.takeAll(), Array.from({ length: 11 }, (_, i) => large(9_990 + i)));
  });

  test('a batch\'s stream stays whole however the queue changes after it was taken', () => {
    const queue = new BinaryRowQueue(codec, 64);
    for (let n = 0; n < 3; n++) queue.push(numbered(n));
    const batch = queue.batch(3);
    queue.drop(3);
    for (let n = 3; n < 1000; n++) queue.push(numbered(n)); // the buffer grows, over the dropped rows' bytes
    assert.deepEqual(batch.records(), [0, 1, 2].map(numbered));
  });
});

describe('BinaryRowQueue on the embedded database', () => {
  let db: Database;
  let dataDir: string;
  before(async () => {
    dataDir = await freshDataDir();
    db = await openDatabase({ dataDir });
    await db.exec('CREATE TABLE queued (id uuid, t text, at timestamptz, b boolean, big bigint, i integer, f float8, n numeric, j jsonb)');
  });
  after(async () => {
    await db?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  test('its batches are COPY streams the database takes, after rows were dropped', async () => {
    const queue = new BinaryRowQueue(codec, 64);
    for (let n = 0; n < 50; n++) queue.push(numbered(n));
    queue.drop(20);
    await db.copyBinary!('queued', ['id', 't', 'at', 'b', 'big', 'i', 'f', 'n', 'j'], queue.batch(30).stream);
    const rows = await db.query<{ big: string; t: string; j: unknown }>('SELECT big::text, t, j FROM queued ORDER BY big');
    assert.deepEqual(rows.map((r) => Number(r.big)), Array.from({ length: 30 }, (_, i) => i + 20));
    assert.equal(rows[2]!.t, numbered(22).values[1]);
    assert.deepEqual(rows[2]!.j, { n: 22 });
  });
});
