/**
 * Cosine-similarity search over vector-store chunks (core/store/vector-chunks.ts) on PGlite (pgvector, HNSW) and
 * on Postgres when TEST_DATABASE_URL is set (this server has no pgvector: real[] and an exact scan). Ranking is
 * checked against scores computed here from planted vectors.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../core/store/database.ts';
import { chunkSearchStatement, insertChunks, searchChunks, type ChunkHit } from '../../core/store/vector-chunks.ts';
import { addStoreFiles } from '../../core/store/vector-stores.ts';
import { embeddingColumn, hnswIndex, normalize, vectorParam } from '../../core/store/vectors.ts';
import { cosine, engines, fileId, isValidationError, newStore, randomVector, seeded } from './vector-fixtures.ts';

interface Planted { storeId: string; fileId: string; chunkIndex: number; vector: number[] }

/** A store of `files` files with the given chunk counts, random vectors of `dims` dimensions. */
async function plant(db: Database, tenantId: string, dims: number, files: number[], next: () => number): Promise<{ storeId: string; planted: Planted[] }> {
  const now = Date.now();
  const store = await newStore(db, tenantId);
  const ids = files.map(() => fileId());
  await addStoreFiles(db, tenantId, store.id, ids, now);
  const planted: Planted[] = [];
  for (const [f, n] of files.entries()) {
    const chunks = Array.from({ length: n }, (_, index) => ({ index, content: `${ids[f]} #${index}`, embedding: randomVector(next, dims) }));
    await insertChunks(db, { tenantId, storeId: store.id, fileId: ids[f]!, chunks, now });
    planted.push(...chunks.map((c) => ({ storeId: store.id, fileId: ids[f]!, chunkIndex: c.index, vector: c.embedding })));
  }
  return { storeId: store.id, planted };
}

function expected(planted: Planted[], query: number[], topK: number, threshold = -Infinity) {
  return planted
    .map((p) => ({ key: `${p.fileId}#${p.chunkIndex}`, score: cosine(p.vector, query) }))
    .filter((p) => p.score >= threshold)
    .sort((a, b) => b.score - a.score)
    .slice(0, topK);
}

function assertRanking(hits: ChunkHit[], want: Array<{ key: string; score: number }>) {
  assert.deepEqual(hits.map((h) => `${h.fileId}#${h.chunkIndex}`), want.map((w) => w.key));
  hits.forEach((hit, i) => assert.ok(Math.abs(hit.score - want[i]!.score) < 1e-5, `score ${hit.score} vs ${want[i]!.score}`));
}

for (const engine of engines) {
  describe(`vector search: ${engine.name}`, { skip: engine.skip }, () => {
    let db: Database;
    let dispose: () => Promise<void>;
    const next = seeded(20240607);
    let small: { storeId: string; planted: Planted[] };
    let wide: { storeId: string; planted: Planted[] };
    let other: { storeId: string; planted: Planted[] };
    const now = () => Date.now();

    before(async () => {
      ({ db, dispose } = await engine.open());
      small = await plant(db, 't1', 8, [20, 20, 10], next);
      wide = await plant(db, 't1', 1536, [3, 2], next);
      other = await plant(db, 't1', 8, [5], next);
    });
    after(async () => dispose());

    test('hits are the planted chunks ranked by cosine similarity, top_k of them, with their ids and content', async () => {
      const query = randomVector(next, 8);
      for (const topK of [1, 5, 50]) {
        const hits = await searchChunks(db, { tenantId: 't1', storeIds: [small.storeId], vector: query, topK, now: now() });
        assertRanking(hits, expected(small.planted, query, topK));
      }
      const [best] = await searchChunks(db, { tenantId: 't1', storeIds: [small.storeId], vector: query, topK: 1, now: now() });
      assert.deepEqual({ ...best, score: 0 }, {
        storeId: small.storeId, fileId: best!.fileId, documentId: best!.fileId, chunkIndex: best!.chunkIndex,
        content: `${best!.fileId} #${best!.chunkIndex}`, score: 0,
      });
      const exact = small.planted[17]!;
      const [self] = await searchChunks(db, { tenantId: 't1', storeIds: [small.storeId], vector: exact.vector.map((x) => x * 3), topK: 1, now: now() });
      assert.equal(`${self!.fileId}#${self!.chunkIndex}`, `${exact.fileId}#${exact.chunkIndex}`);
      assert.ok(Math.abs(self!.score - 1) < 1e-5, 'a chunk scores 1 against its own direction, whatever the length');
    });

    test('several stores are searched together; only the named stores of the tenant count', async () => {
      const query = randomVector(next, 8);
      const both = await searchChunks(db, { tenantId: 't1', storeIds: [small.storeId, other.storeId, 'vs-nonsense'], vector: query, topK: 50, now: now() });
      assertRanking(both, expected([...small.planted, ...other.planted], query, 50));
      assert.deepEqual(await searchChunks(db, { tenantId: 't2', storeIds: [small.storeId], vector: query, topK: 5, now: now() }), []);
      assert.deepEqual(await searchChunks(db, { tenantId: 't1', storeIds: [], vector: query, topK: 5, now: now() }), []);
    });

    test('the threshold drops lower scores', async () => {
      const query = randomVector(next, 8);
      const hits = await searchChunks(db, { tenantId: 't1', storeIds: [small.storeId], vector: query, topK: 50, threshold: 0.3, now: now() });
      const want = expected(small.planted, query, 50, 0.3);
      assert.ok(want.length > 0 && want.length < 50, 'the planted vectors straddle the threshold');
      assertRanking(hits, want);
    });

    test('1,536-dimension chunks are searched by their own length; another length is a VALIDATION_ERROR', async () => {
      const query = randomVector(next, 1536);
      assertRanking(await searchChunks(db, { tenantId: 't1', storeIds: [wide.storeId], vector: query, topK: 5, now: now() }), expected(wide.planted, query, 5));
      await assert.rejects(searchChunks(db, { tenantId: 't1', storeIds: [wide.storeId], vector: randomVector(next, 8), topK: 5, now: now() }), isValidationError('/query'));
      await assert.rejects(
        searchChunks(db, { tenantId: 't1', storeIds: [small.storeId, wide.storeId], vector: query, topK: 5, now: now() }), isValidationError('/vector_store_ids'));
    });

    test('top_k, threshold and the vector are checked', async () => {
      const search = (overrides: object) => searchChunks(db, { tenantId: 't1', storeIds: [small.storeId], vector: [1, 0, 0, 0, 0, 0, 0, 0], topK: 5, now: now(), ...overrides });
      for (const topK of [0, 51, 2.5]) await assert.rejects(search({ topK }), isValidationError('/top_k'));
      for (const threshold of [-0.1, 1.5, Number.NaN]) await assert.rejects(search({ threshold }), isValidationError('/threshold'));
      await assert.rejects(search({ vector: new Array(8).fill(0) }), isValidationError('/vector'));
      await assert.rejects(search({ vector: [1, Number.NaN, 0, 0, 0, 0, 0, 0] }), isValidationError('/vector'));
    });

    test('the embedding column is vector with pgvector and real[] without it', async () => {
      const [row] = await db.query<{ type: string }>(
        `SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = 'vector_store_chunks'::regclass AND attname = 'embedding'`);
      const column = await embeddingColumn(db);
      assert.equal(row!.type, column);
      assert.equal(column, db.hasVector ? 'vector' : 'real[]');
      const indexes = (await db.query<{ indexname: string }>(
        `SELECT indexname FROM pg_indexes WHERE tablename = 'vector_store_chunks' AND indexname LIKE '%hnsw%' AND schemaname = current_schema() ORDER BY indexname`,
      )).map((r) => r.indexname);
      assert.deepEqual(indexes, column === 'vector' ? ['vector_store_chunks_hnsw_1536', 'vector_store_chunks_hnsw_8'] : []);
    });
  });
}

describe('vector search: the HNSW index (pglite)', () => {
  let db: Database;
  let dispose: () => Promise<void>;
  const next = seeded(7);
  let small: { storeId: string; planted: Planted[] };
  before(async () => {
    ({ db, dispose } = await engines[0]!.open());
    small = await plant(db, 't1', 8, [20, 20, 10], next);
    await plant(db, 't1', 8, [200], next);
    await plant(db, 't2', 8, [100], next);
  });
  after(async () => dispose());

  test('the index is built per length, and the planner can use it for the search statement', async () => {
    const [index] = await db.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE indexname = 'vector_store_chunks_hnsw_8'`);
    assert.match(index!.indexdef, /USING hnsw \(\(\(embedding\)::vector\(8\)\) vector_cosine_ops\) WHERE \(dims = 8\)/);
    const sql = chunkSearchStatement('vector', 8, hnswIndex(8));
    const params = [vectorParam('vector', normalize(randomVector(next, 8))), 't1', [small.storeId], Date.now(), 5];
    const plan = await db.transaction(async (tx) => {
      // Too few rows for the planner to prefer the index on its own; the point is that it matches the statement.
      await tx.exec('SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off');
      return tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params);
    });
    assert.match(plan.map((r) => r['QUERY PLAN']).join('\n'), /Index Scan using vector_store_chunks_hnsw_8/);
  });

  test('the index path finds what the exact scan finds, under a store filter that keeps a fifth of the rows', async () => {
    for (let round = 0; round < 5; round++) {
      const query = randomVector(next, 8);
      const search = { tenantId: 't1', storeIds: [small.storeId], vector: query, topK: 10, now: Date.now() };
      const viaIndex = await searchChunks(db, { ...search, exactScanLimit: 0 });
      assertRanking(viaIndex, expected(small.planted, query, 10));
      assert.deepEqual(viaIndex, await searchChunks(db, search));
    }
  });

  test('lengths above 2,000 are indexed as halfvec up to 4,000, and scanned without an index above', async () => {
    const half = await plant(db, 't1', 3000, [3], next);
    const huge = await plant(db, 't1', 4100, [3], next);
    const names = (await db.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE indexname LIKE 'vector_store_chunks_hnsw_%'`)).map((r) => r.indexname);
    assert.ok(names.includes('vector_store_chunks_hnsw_3000') && !names.includes('vector_store_chunks_hnsw_4100'), names.join());
    for (const { storeId, planted } of [half, huge]) {
      const query = randomVector(next, planted[0]!.vector.length);
      assertRanking(await searchChunks(db, { tenantId: 't1', storeIds: [storeId], vector: query, topK: 3, now: Date.now(), exactScanLimit: 0 }), expected(planted, query, 3));
    }
  });

  test('the column type is read from the catalog, not assumed from pgvector being there', async () => {
    await assert.rejects(db.transaction(async (tx) => {
      await tx.exec('CREATE SCHEMA legacy; SET LOCAL search_path = legacy, public; CREATE TABLE vector_store_chunks (embedding real[])');
      assert.equal(await embeddingColumn(tx), 'real[]');
      throw new Error('rolled back');
    }), /rolled back/);
    assert.equal(await embeddingColumn(db), 'vector');
  });
});
