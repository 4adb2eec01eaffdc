/**
 * The usage batch write: a binary COPY on the embedded database, the multi-row INSERT elsewhere. Both must store the
 * same rows, whatever the text holds, and a batch written again must add nothing.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { openDatabase, type Database, type Queryable } from '../../core/store/database.ts';
import { migrate } from '../../core/store/migrate.ts';
import { insertUsageRecords, usageRowQueue, writeUsageBatch, type UsageRecord } from '../../plugins/usage/record.ts';
import { builtInMigrations } from '../helpers/config.ts';
import { freshDataDir } from '../helpers/data-dir.ts';

function record(fields: Partial<UsageRecord> = {}): UsageRecord {
  return {
    id: randomUUID(), requestId: randomUUID(), createdAt: Date.parse('2026-11-26T10:00:00.123Z'), tenantId: 'default',
    organizationId: null, departmentId: null, callerKind: 'api_key', apiKeyId: 'key_1', userId: null,
    endpoint: '/v1/chat/completions', modality: 'chat', stream: false, provider: 'openai', requestedModel: 'gpt-4o-mini',
    model: 'gpt-4o-mini', upstreamModel: 'gpt-4o-mini', promptTokens: 12, completionTokens: 9, cachedTokens: 0,
    reasoningTokens: 0, totalTokens: 21, searchUnits: 0, estimated: false, costUsd: 0.0000123, latencyMs: 3.25,
    ttfbMs: null, status: 'completed', errorCode: null,
    ...fields,
  };
}

/** Values a COPY must carry exactly: separators, quotes, line breaks, backslashes, non-ASCII text, the empty string against NULL. */
function awkwardBatch(): UsageRecord[] {
  return [
    record(),
    record({ requestedModel: 'a,b "quoted" model\nwith a line break\r\nand \\N and \\\\', userId: '', callerKind: 'jwt', apiKeyId: null }),
    record({ requestedModel: '', organizationId: 'org_1', departmentId: 'dep "x"', stream: true, estimated: true, ttfbMs: 1.5 }),
    record({ requestedModel: 'modèle 模型 \u{1F600}', costUsd: 7.2e-7, latencyMs: 1e-9, createdAt: Date.parse('1999-12-31T23:59:59.999Z') }),
    record({ provider: null, model: null, upstreamModel: null, status: 'failed', errorCode: 'UPSTREAM_ERROR', costUsd: null, latencyMs: 0 }),
    record({
      modality: 'speech', endpoint: '/v1/audio/speech', characters: 1234, audioSeconds: 2.5, images: 3, videoSeconds: 4.25,
      requests: 7, cacheStatus: 'semantic-hit', searchUnits: 2, costUsd: 12.345678901234,
      retrieval: JSON.stringify({ chunks: [{ storeId: 'vs_1', fileId: 'file "1", x', chunkIndex: 0, score: 0.5 }] }),
      guardVerdicts: JSON.stringify([{ guard: 'pii', type: 'email', action: 'redact', direction: 'input', count: 2 }]),
      promptTokens: 9_007_199_254_740_991, totalTokens: 9_007_199_254_740_991,
    }),
  ];
}

/** The same database without copyBinary: the INSERT path. */
const insertOnly = (db: Queryable): Queryable => ({ query: (sql, params) => db.query(sql, params), exec: (sql) => db.exec(sql) });

async function rowsOf(db: Queryable, ids: readonly string[]): Promise<Array<Record<string, unknown>>> {
  const rows = await db.query<Record<string, unknown>>('SELECT * FROM usage_records WHERE id = ANY($1::uuid[])', [ids]);
  const order = new Map(ids.map((id, i) => [id, i]));
  return rows.sort((a, b) => order.get(String(a.id))! - order.get(String(b.id))!).map(({ id: _id, request_id: _request, ...rest }) => rest);
}

async function countOf(db: Queryable, records: readonly UsageRecord[]): Promise<number> {
  const rows = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM usage_records WHERE id = ANY($1::uuid[])', [records.map((r) => r.id)]);
  return rows[0]!.n;
}

describe('usage batch write on the embedded database', () => {
  let db: Database;
  let dataDir: string;
  before(async () => {
    dataDir = await freshDataDir();
    db = await openDatabase({ dataDir });
    await migrate(db, builtInMigrations);
  });
  after(async () => {
    await db?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  test('has COPY, and it stores exactly what the INSERT stores', async () => {
    assert.equal(typeof db.copyBinary, 'function');
    const copied = awkwardBatch();
    const inserted = copied.map((r) => ({ ...r, id: randomUUID(), requestId: randomUUID() }));
    await insertUsageRecords(db, copied);
    await insertUsageRecords(insertOnly(db), inserted);
    const fromCopy = await rowsOf(db, copied.map((r) => r.id));
    assert.equal(fromCopy.length, copied.length);
    assert.deepEqual(fromCopy, await rowsOf(db, inserted.map((r) => r.id)));
    // Spot checks against the records themselves.
    assert.equal(fromCopy[1]!.requested_model, copied[1]!.requestedModel);
    assert.equal(fromCopy[1]!.user_id, '');
    assert.equal(fromCopy[2]!.requested_model, '');
    assert.equal(fromCopy[0]!.organization_id, null);
    assert.equal(fromCopy[3]!.requested_model, 'modèle 模型 \u{1F600}');
    assert.equal(fromCopy[3]!.cost_usd, '0.00000072');
    assert.equal((fromCopy[3]!.created_at as Date).toISOString(), '1999-12-31T23:59:59.999Z');
    assert.equal(fromCopy[5]!.cost_usd, '12.345678901234');
    assert.equal(String(fromCopy[5]!.prompt_tokens), '9007199254740991');
    assert.deepEqual(fromCopy[5]!.guard_verdicts, JSON.parse(copied[5]!.guardVerdicts!));
  });

  test('a batch written again adds nothing, and its new records are written', async () => {
    const batch = [record(), record()];
    await insertUsageRecords(db, batch);
    const again = [...batch, record({ requestedModel: 'new one' })];
    await insertUsageRecords(db, again);
    assert.equal(await countOf(db, again), 3);
  });

  test('rows the recorder\'s queue encoded when they were handed in: stored as the INSERT stores them, and written again add nothing', async () => {
    const queued = awkwardBatch();
    const inserted = queued.map((r) => ({ ...r, id: randomUUID(), requestId: randomUUID() }));
    const queue = usageRowQueue(500);
    for (const r of queued) queue.push(r);
    const batch = queue.batch(queued.length);
    await writeUsageBatch(db, batch);
    await insertUsageRecords(insertOnly(db), inserted);
    assert.deepEqual(await rowsOf(db, queued.map((r) => r.id)), await rowsOf(db, inserted.map((r) => r.id)));
    // A batch whose answer was lost is written again, with records that came after it: the COPY fails on the
    // primary key, and the INSERT of the decoded records skips those already there.
    const later = record({ requestedModel: 'after the lost answer' });
    queue.push(later);
    await writeUsageBatch(db, queue.batch(queued.length + 1));
    assert.equal(await countOf(db, [...queued, later]), queued.length + 1);
    const laterInserted = { ...later, id: randomUUID(), requestId: randomUUID() };
    await insertUsageRecords(insertOnly(db), [laterInserted]);
    assert.deepEqual(await rowsOf(db, [later.id]), await rowsOf(db, [laterInserted.id]), 'the decoded record is the record');
    // On a database without COPY the same rows go by the INSERT.
    const elsewhere = [record(), record({ costUsd: null, ttfbMs: 2.5 })];
    const other = usageRowQueue(500);
    for (const r of elsewhere) other.push(r);
    await writeUsageBatch(insertOnly(db), other.batch(2));
    assert.equal(await countOf(db, elsewhere), 2);
  });

  test('any other failure fails the batch whole', async () => {
    // A token count that is not a number: bigint refuses it, in the COPY's writer as in the INSERT.
    const bad = [record(), record({ promptTokens: Number.NaN })];
    await assert.rejects(insertUsageRecords(db, bad));
    assert.equal(await countOf(db, bad), 0);
  });

  test('copyCsv and copyBinary take only plain identifiers', async () => {
    await assert.rejects(db.copyCsv!('usage_records; DROP TABLE x', ['id'], ''), /not a plain SQL identifier/);
    await assert.rejects(db.copyCsv!('usage_records', ['"id"'], ''), /not a plain SQL identifier/);
    await assert.rejects(db.copyBinary!('usage_records; DROP TABLE x', ['id'], new Uint8Array()), /copyBinary: .* not a plain SQL identifier/);
    await assert.rejects(db.copyBinary!('usage_records', ['"id"'], new Uint8Array()), /not a plain SQL identifier/);
  });
});
