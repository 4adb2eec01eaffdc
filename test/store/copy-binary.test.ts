/**
 * BinaryCopyWriter against the embedded database: every type it writes must read back as the same value the CSV
 * text of it gives (numeric's display scale included), and a value its type cannot hold must throw in the writer.
 */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { BinaryCopyWriter, type CopyColumnType, type CopyValues } from '../../core/store/copy-binary.ts';
import { openDatabase, type Database } from '../../core/store/database.ts';
import { freshDataDir } from '../helpers/data-dir.ts';

/** One column of `type` written both ways: returns [binary's text, CSV's text] per value. */
async function bothWays<T extends CopyColumnType>(db: Database, type: T, values: Array<CopyValues[T] | null>, csvText: (v: CopyValues[T]) => string): Promise<Array<[string | null, string | null]>> {
  await db.exec(`DROP TABLE IF EXISTS via_binary, via_csv; CREATE TABLE via_binary (n int, v ${type}); CREATE TABLE via_csv (n int, v ${type})`);
  // A tiny first buffer: every write below makes it grow.
  const writer = new BinaryCopyWriter(1);
  values.forEach((value, n) => {
    writer.row(2);
    writer.integer(n);
    writer.value(type, value);
  });
  await db.copyBinary!('via_binary', ['n', 'v'], writer.finish());
  await db.copyCsv!('via_csv', ['n', 'v'], values.map((value, n) => `${n},${value === null ? '' : csvText(value)}`).join('\n'));
  const read = async (table: string) => (await db.query<{ v: string | null }>(`SELECT v::text AS v FROM ${table} ORDER BY n`)).map((row) => row.v);
  const [binary, csv] = [await read('via_binary'), await read('via_csv')];
  assert.equal(binary.length, values.length);
  return binary.map((v, i) => [v, csv[i]!]);
}

const quoted = (text: string) => `"${text.replaceAll('"', '""')}"`;

function randomNumbers(count: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const magnitude = 10 ** (Math.floor(Math.random() * 40) - 25);
    const value = Math.random() * magnitude * (Math.random() < 0.3 ? -1 : 1);
    out.push(i % 5 === 0 ? Number(value.toPrecision(1 + (i % 7))) : value);
  }
  return out;
}

describe('BinaryCopyWriter on the embedded database', () => {
  let db: Database;
  let dataDir: string;
  before(async () => {
    dataDir = await freshDataDir();
    db = await openDatabase({ dataDir });
  });
  after(async () => {
    await db?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  test('numeric: the value and display scale of String(n), for numbers of every size and sign', async () => {
    const values = [0, -0, 1, -1, 10, 100, 1000, 10000, 12345, 0.5, 0.0001, 0.00001, 7.2e-7, 1.5e-7, 12.345678901234, 123456789.123,
      1e21, 1.234e25, 5e-324, Number.MAX_VALUE, Number.MAX_SAFE_INTEGER, -0.000123, 99999999, 100000001, NaN, Infinity, -Infinity,
      ...randomNumbers(300)];
    for (const [binary, csv] of await bothWays(db, 'numeric', [...values, null], (v) => String(v))) assert.equal(binary, csv);
  });

  test('float8, bigint, integer and boolean read back as their CSV text does', async () => {
    const floats = [0, 1.5, -2.25, 1e-9, 5e-324, Number.MAX_VALUE, NaN, Infinity, -Infinity, ...randomNumbers(50)];
    for (const [binary, csv] of await bothWays(db, 'float8', [...floats, null], (v) => String(v))) assert.equal(binary, csv);
    // The one difference: the binary form keeps the sign of -0, which String(-0) drops.
    assert.deepEqual(await bothWays(db, 'float8', [-0], (v) => String(v)), [['-0', '0']]);
    const bigints = [0, 1, -1, 2 ** 32, -(2 ** 32), 2 ** 32 - 1, 2 ** 31, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
    for (const [binary, csv] of await bothWays(db, 'bigint', [...bigints, null], (v) => String(v))) assert.equal(binary, csv);
    for (const [binary, csv] of await bothWays(db, 'integer', [0, 7, -7, 2 ** 31 - 1, -(2 ** 31), null], (v) => String(v))) assert.equal(binary, csv);
    for (const [binary, csv] of await bothWays(db, 'boolean', [true, false, null], (v) => (v ? 't' : 'f'))) assert.equal(binary, csv);
  });

  test('text and jsonb: any characters, the empty string apart from NULL, values longer than the buffer', async () => {
    const texts = ['', 'plain', 'a,b "quoted"\nline\r\nbreak \\N \\\\', 'modèle 模型 \u{1F600}', 'x'.repeat(100_000), '\u00e9'.repeat(40_000)];
    for (const [binary, csv] of await bothWays(db, 'text', [...texts, null], quoted)) assert.equal(binary, csv);
    const json = [JSON.stringify({ a: [1, 2.5, 'é'], b: null, c: { d: 'x"y' } }), '[]', '"text"'];
    for (const [binary, csv] of await bothWays(db, 'jsonb', [...json, null], quoted)) assert.equal(binary, csv);
  });

  test('uuid in either case; timestamptz to the microsecond, before and after 2000', async () => {
    const uuids = ['01a21c9d-3333-7000-8bb6-fe9b6c3fa969', 'F3ECC90B-B84D-492D-8FC3-3BBB4A0995FC', '00000000-0000-0000-0000-000000000000'];
    for (const [binary, csv] of await bothWays(db, 'uuid', [...uuids, null], (v) => v)) assert.equal(binary, csv);
    const times = [Date.parse('2026-11-27T10:46:33.990Z'), Date.parse('1999-12-31T23:59:59.999Z'), 0, Date.parse('2000-01-01T00:00:00Z'), 1764240393990.123];
    await db.exec('DROP TABLE IF EXISTS at_binary; CREATE TABLE at_binary (n int, v timestamptz)');
    const writer = new BinaryCopyWriter();
    times.forEach((ms, n) => { writer.row(2); writer.integer(n); writer.timestamptz(ms); });
    await db.copyBinary!('at_binary', ['n', 'v'], writer.finish());
    const rows = await db.query<{ us: string }>(`SELECT (extract(epoch FROM v) * 1000000)::bigint::text AS us FROM at_binary ORDER BY n`);
    assert.deepEqual(rows.map((row) => row.us), times.map((ms) => String(Math.round(ms * 1000))));
  });

  test('a value its type cannot hold throws in the writer, before anything reaches the database', () => {
    const writer = new BinaryCopyWriter();
    writer.row(1);
    assert.throws(() => writer.uuid('not-a-uuid'), TypeError);
    assert.throws(() => writer.uuid('01a21c9d33337000-8bb6-fe9b6c3fa969x'), TypeError);
    assert.throws(() => writer.uuid('01a21c9d-3333-7000-8bb6-fe9b6c3fa96g'), TypeError);
    assert.throws(() => writer.uuid('01a21c9d+3333-7000-8bb6-fe9b6c3fa969'), TypeError);
    assert.throws(() => writer.bigint(1.5), RangeError);
    assert.throws(() => writer.bigint(Number.NaN), RangeError);
    assert.throws(() => writer.bigint(2 ** 53), RangeError);
    assert.throws(() => writer.integer(2 ** 31), RangeError);
    assert.throws(() => writer.timestamptz(Number.NaN), RangeError);
    writer.finish();
    assert.throws(() => writer.row(1), /finished/);
  });

  test('the database reads exactly the bytes of a view into a larger buffer, and the caller keeps them', async () => {
    await db.exec('DROP TABLE IF EXISTS viewed; CREATE TABLE viewed (n int, t text)');
    const writer = new BinaryCopyWriter();
    writer.row(2);
    writer.integer(7);
    writer.text('seven');
    const stream = writer.finish();
    // Garbage on both sides of the stream, as in a pooled or over-allocated buffer.
    const backing = new Uint8Array(stream.length + 64).fill(0xff);
    backing.set(stream, 16);
    const view = backing.subarray(16, 16 + stream.length);
    await db.copyBinary!('viewed', ['n', 't'], view);
    await db.copyBinary!('viewed', ['n', 't'], view);
    assert.deepEqual(await db.query('SELECT n, t FROM viewed'), [{ n: 7, t: 'seven' }, { n: 7, t: 'seven' }]);
    assert.equal(view.byteLength, stream.length);
    assert.deepEqual([...view], [...stream]);
    // A short CSV text, which Buffer would encode into its shared pool.
    await db.copyCsv!('viewed', ['n', 't'], '8,eight');
    assert.equal((await db.query('SELECT count(*)::int AS n FROM viewed'))[0]!.n, 3);
  });

  test('a stream the database cannot read fails its COPY whole', async () => {
    await db.exec('DROP TABLE IF EXISTS whole; CREATE TABLE whole (n int)');
    const writer = new BinaryCopyWriter();
    writer.row(1);
    writer.integer(1);
    writer.row(2); // a row with one value more than the table's columns
    writer.integer(2);
    writer.integer(3);
    await assert.rejects(db.copyBinary!('whole', ['n'], writer.finish()));
    assert.deepEqual(await db.query('SELECT * FROM whole'), []);
  });
});
