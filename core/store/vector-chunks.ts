/**
 * The chunks of gateway-owned vector stores (migration 0007_vector_stores): written per file, searched by cosine
 * similarity, swept at expiry. Embeddings are stored L2-normalized (vectors.ts), so the score is a dot product.
 *
 * Search. With pgvector, a partial HNSW index per embedding length (vectors.ts) serves stores too large to scan:
 * the query orders by the same cast expression under the same `dims = <n>` predicate, with a LIMIT, so that the
 * planner can use it; pgvector's strict iterative scan keeps reading the index until enough rows pass the store
 * filter. HNSW is approximate, and a filter that keeps few of the indexed rows can exhaust the scan's budget:
 * stores with up to `exactScanLimit` chunks in all are therefore scanned exactly, which at that size costs
 * milliseconds. Without pgvector every search is an exact scan over real[] (the migration's aigw_vector_dot).
 */
import { validationError } from '../errors.ts';
import type { Queryable } from './database.ts';
import { isGatewayId } from './ids.ts';
import { LIVE } from './vector-stores.ts';
import {
  embeddingColumn, ensureHnswIndex, hnswIndex, normalize, vectorCast, vectorParam, type EmbeddingColumn, type HnswIndex, type TransactionalDb,
} from './vectors.ts';

export interface NewChunk {
  /** The chunk's position in its file, from 0. */
  index: number;
  content: string;
  /** As the embedding model returned it; normalized here. */
  embedding: readonly number[];
}

export interface ChunkSearch {
  tenantId: string;
  /** Ids that are not the tenant's live stores are left out (a search of none finds nothing). */
  storeIds: readonly string[];
  /** The query's embedding, by the stores' embedding model. */
  vector: readonly number[];
  /** 1 to 50. */
  topK: number;
  /** 0 to 1: hits scoring lower are dropped. */
  threshold?: number;
  now: number;
  /** Stores holding up to this many chunks in all are scanned exactly, never through the index. */
  exactScanLimit?: number;
}

export interface ChunkHit {
  storeId: string;
  fileId: string;
  documentId: string;
  chunkIndex: number;
  content: string;
  /** Cosine similarity, -1 to 1. */
  score: number;
}

export const MAX_TOP_K = 50;
export const DEFAULT_EXACT_SCAN_LIMIT = 20_000;
/** Rows per INSERT statement: ~200 keeps a statement's parameters and size modest for 4,000-dimension vectors. */
const INSERT_BATCH = 200;
// The index scan's settings: candidates kept per step (at least twice top_k), and how many index tuples a filtered
// scan may visit before it gives up (pgvector's default is 20,000; a large store among larger ones needs more).
const INDEX_SETTINGS = 'SET LOCAL hnsw.ef_search = 100; SET LOCAL hnsw.iterative_scan = strict_order; SET LOCAL hnsw.max_scan_tuples = 100000';

const at = (param: number) => `to_timestamp($${param}::double precision / 1000)`;

function checkChunks(chunks: readonly NewChunk[]): { dims: number | null; vectors: number[][] } {
  const seen = new Set<number>();
  let dims: number | null = null;
  const vectors = chunks.map((chunk, i) => {
    if (!Number.isInteger(chunk.index) || chunk.index < 0 || seen.has(chunk.index)) {
      throw validationError([{ path: `/chunks/${i}/index`, message: 'must be a distinct integer from 0' }]);
    }
    seen.add(chunk.index);
    const vector = normalize(chunk.embedding, `/chunks/${i}/embedding`);
    if (dims !== null && vector.length !== dims) {
      throw validationError([{ path: `/chunks/${i}/embedding`, message: `has ${vector.length} dimensions; the file's first chunk has ${dims}` }]);
    }
    dims = vector.length;
    return vector;
  });
  return { dims, vectors };
}

/**
 * Stores a file's chunks in place of those it had in that store, in one transaction, and records their count
 * on the file's row (its status is left to setStoreFileResult). Null when the store or the file is gone (deleted,
 * detached or expired meanwhile): nothing is written. The first chunks fix the store's embedding length; chunks
 * of another length are a VALIDATION_ERROR.
 */
export async function insertChunks(
  db: TransactionalDb,
  input: { tenantId: string; storeId: string; fileId: string; documentId?: string; chunks: readonly NewChunk[]; now: number },
): Promise<number | null> {
  const { tenantId, storeId, fileId, now } = input;
  if (!isGatewayId('vs', storeId)) return null;
  const { dims, vectors } = checkChunks(input.chunks);
  const column = await embeddingColumn(db);
  if (dims !== null) {
    // Outside the transaction below, which only shares the store's row lock: two files' first chunks may race here.
    const [store] = await db.query<{ dims: number }>(
      `UPDATE vector_stores SET dims = COALESCE(dims, $3) WHERE tenant_id = $1 AND id = $2 AND ${LIVE(4)} RETURNING dims`,
      [tenantId, storeId, dims, now],
    );
    if (!store) return null;
    if (store.dims !== dims) {
      throw validationError([{ path: '/chunks', message: `have ${dims} dimensions; the store's embeddings have ${store.dims}` }]);
    }
    if (column === 'vector') await ensureHnswIndex(db, dims);
  }
  return db.transaction(async (tx) => {
    const stores = await tx.query(`SELECT id FROM vector_stores WHERE tenant_id = $1 AND id = $2 AND ${LIVE(3)} FOR SHARE`, [tenantId, storeId, now]);
    const files = stores.length === 0 ? [] : await tx.query(
      'SELECT file_id FROM vector_store_files WHERE store_id = $1 AND file_id = $2 FOR UPDATE', [storeId, fileId],
    );
    if (files.length === 0) return null;
    await tx.query('DELETE FROM vector_store_chunks WHERE store_id = $1 AND file_id = $2', [storeId, fileId]);
    for (let start = 0; start < vectors.length; start += INSERT_BATCH) {
      const params: unknown[] = [storeId, fileId, input.documentId ?? fileId, dims];
      const rows = vectors.slice(start, start + INSERT_BATCH).map((vector, offset) => {
        const chunk = input.chunks[start + offset]!;
        // Postgres text cannot hold U+0000; extracted text has no use for it either.
        params.push(chunk.index, chunk.content.replaceAll('\u0000', ''), vectorParam(column, vector));
        const p = params.length;
        return `($${p - 2}::integer, $${p - 1}::text, $${p}${vectorCast(column)})`;
      });
      await tx.query(
        `INSERT INTO vector_store_chunks (store_id, tenant_id, file_id, document_id, dims, expires_at, chunk_index, content, embedding)
         SELECT s.id, s.tenant_id, $2, $3, $4, s.expires_at, v.chunk_index, v.content, v.embedding
         FROM vector_stores s, (VALUES ${rows.join(', ')}) AS v (chunk_index, content, embedding) WHERE s.id = $1`,
        params,
      );
    }
    await tx.query(
      `UPDATE vector_store_files SET chunk_count = $3, updated_at = ${at(4)} WHERE store_id = $1 AND file_id = $2`,
      [storeId, fileId, vectors.length, now],
    );
    return vectors.length;
  });
}

/**
 * The search statement: $1 the normalized query vector, $2 the tenant, $3 the store ids, $4 now, $5 the limit.
 * With `index`, ordered by the index's own expression (the planner may use it); else by the exact score.
 */
export function chunkSearchStatement(column: EmbeddingColumn, dims: number, index: HnswIndex | null): string {
  const score = column === 'vector' ? '1 - (embedding <=> $1::text::vector)' : 'aigw_vector_dot(embedding, $1::text::real[])';
  const order = index
    ? `embedding::${index.cast} <=> $1::text::${index.cast}`
    : 'score DESC, store_id COLLATE "C", file_id COLLATE "C", chunk_index';
  // dims is the stores' checked integer: a literal, so that it implies the partial index's predicate.
  return `SELECT store_id, file_id, document_id, chunk_index, content, ${score} AS score FROM vector_store_chunks
    WHERE tenant_id = $2 AND store_id = ANY($3::text[]) AND dims = ${dims} AND ${LIVE(4)}
    ORDER BY ${order} LIMIT $5`;
}

interface HitRow { store_id: string; file_id: string; document_id: string; chunk_index: number; content: string; score: number | string }

const byRank = (a: ChunkHit, b: ChunkHit) => b.score - a.score
  || (a.storeId < b.storeId ? -1 : a.storeId > b.storeId ? 1 : 0)
  || (a.fileId < b.fileId ? -1 : a.fileId > b.fileId ? 1 : 0)
  || a.chunkIndex - b.chunkIndex;

/**
 * The tenant's best chunks for a query vector across its live stores, best first. The stores must share one
 * embedding length and the query must have it: otherwise a VALIDATION_ERROR (the query was embedded with another
 * model than the store's).
 */
export async function searchChunks(db: TransactionalDb, search: ChunkSearch): Promise<ChunkHit[]> {
  if (!Number.isInteger(search.topK) || search.topK < 1 || search.topK > MAX_TOP_K) {
    throw validationError([{ path: '/top_k', message: `must be an integer from 1 to ${MAX_TOP_K}` }]);
  }
  const threshold = search.threshold;
  if (threshold !== undefined && !(typeof threshold === 'number' && threshold >= 0 && threshold <= 1)) {
    throw validationError([{ path: '/threshold', message: 'must be a number from 0 to 1' }]);
  }
  const vector = normalize(search.vector);
  const ids = [...new Set(search.storeIds)].filter((id) => isGatewayId('vs', id));
  if (ids.length === 0) return [];
  const stores = await db.query<{ dims: number; chunk_count: string | number }>(
    `SELECT dims, chunk_count FROM vector_store_summaries
     WHERE tenant_id = $1 AND id = ANY($2::text[]) AND ${LIVE(3)} AND dims IS NOT NULL`,
    [search.tenantId, ids, search.now],
  );
  if (stores.length === 0) return [];
  const lengths = [...new Set(stores.map((s) => s.dims))];
  if (lengths.length > 1) {
    throw validationError([{ path: '/vector_store_ids', message: `name stores embedded with different lengths (${lengths.join(', ')}): search them one at a time` }]);
  }
  const dims = lengths[0]!;
  if (vector.length !== dims) {
    throw validationError([{ path: '/query', message: `was embedded with ${vector.length} dimensions; the store's chunks have ${dims} (another embedding model?)` }]);
  }
  const column = await embeddingColumn(db);
  const candidates = stores.reduce((sum, s) => sum + Number(s.chunk_count), 0);
  const index = column === 'vector' && candidates > (search.exactScanLimit ?? DEFAULT_EXACT_SCAN_LIMIT) ? hnswIndex(dims) : null;
  const sql = chunkSearchStatement(column, dims, index);
  const params = [vectorParam(column, vector), search.tenantId, ids, search.now, search.topK];
  const rows = index
    ? await db.transaction(async (tx) => {
      await tx.exec(INDEX_SETTINGS);
      return tx.query<HitRow>(sql, params);
    })
    : await db.query<HitRow>(sql, params);
  return rows
    .map((row) => ({
      storeId: row.store_id, fileId: row.file_id, documentId: row.document_id, chunkIndex: row.chunk_index, content: row.content,
      score: Number(row.score),
    }))
    .filter((hit) => threshold === undefined || hit.score >= threshold)
    .sort(byRank);
}

/**
 * The expiry sweep: deletes up to `limit` stores past their expires_at at `now` (the longest expired first), with
 * their files and chunks, and any chunk past its own expiry. Stores another sweep holds are left to it.
 */
export async function expireVectorStores(db: TransactionalDb, now: number, limit: number): Promise<{ stores: number; chunks: number }> {
  return db.transaction(async (tx) => {
    const doomed = (await tx.query<{ id: string }>(
      `SELECT id FROM vector_stores WHERE expires_at <= ${at(1)} ORDER BY expires_at, id LIMIT $2 FOR UPDATE SKIP LOCKED`, [now, limit],
    )).map((row) => row.id);
    const [chunks] = await tx.query<{ n: number }>(
      `WITH gone AS (DELETE FROM vector_store_chunks WHERE store_id = ANY($1::text[]) OR expires_at <= ${at(2)} RETURNING 1)
       SELECT count(*)::integer AS n FROM gone`,
      [doomed, now],
    );
    const stores = doomed.length === 0 ? [] : await tx.query('DELETE FROM vector_stores WHERE id = ANY($1::text[]) RETURNING id', [doomed]);
    return { stores: stores.length, chunks: chunks?.n ?? 0 };
  });
}
