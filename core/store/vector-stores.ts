/**
 * Gateway-owned vector stores (migration 0007_vector_stores): a gateway id (`vs-<uuid>`), the files attached to
 * it and their ingestion status. Everything is read by tenant; a store past its expires_at is gone for every
 * reader (the sweep in vector-chunks.ts deletes it). The store's status is recomputed from its files under a
 * lock on the store's row, so that of two files finishing at once the later one always sees the other.
 * Chunks and search: vector-chunks.ts.
 */
import { GatewayError, validationError } from '../errors.ts';
import type { Queryable } from './database.ts';
import { isGatewayId, orderedUuid } from './ids.ts';
import { listPage, type Page, type PageRequest } from './pagination.ts';
import type { TransactionalDb } from './vectors.ts';

export type VectorStoreStatus = 'in_progress' | 'completed';
export type StoreFileStatus = 'in_progress' | 'completed' | 'skipped' | 'failed';

export interface FileCounts { total: number; in_progress: number; completed: number; skipped: number; failed: number }

export interface VectorStoreRecord {
  id: string;
  tenantId: string;
  name: string;
  embeddingModel: string;
  status: VectorStoreStatus;
  /** The length of the store's embeddings, once its first chunks are stored. */
  dims: number | null;
  metadata: Record<string, unknown> | null;
  /** ms since the epoch, or null */
  expiresAt: number | null;
  apiKeyId: string | null;
  userId: string | null;
  /** ms since the epoch */
  createdAt: number;
  fileCounts: FileCounts;
  chunkCount: number;
}

export type NewVectorStore = Pick<VectorStoreRecord, 'tenantId' | 'name' | 'embeddingModel' | 'metadata' | 'expiresAt' | 'apiKeyId' | 'userId'>;

/** The fields a PATCH may change; an absent one stays. expiresAt moves the store's chunks' expiry too. */
export interface VectorStoreChanges {
  name?: string;
  expiresAt?: number | null;
  metadata?: Record<string, unknown> | null;
}

export interface StoreFileRecord {
  storeId: string;
  fileId: string;
  status: StoreFileStatus;
  warning: string | null;
  chunkCount: number;
  /** ms since the epoch */
  createdAt: number;
  updatedAt: number;
}

/** How a file's ingestion ended. `completed` keeps the chunks insertChunks stored; the others remove them. */
export type StoreFileResult = { status: 'completed' } | { status: 'skipped' | 'failed'; warning: string };

interface SummaryRow {
  id: string; tenant_id: string; name: string; embedding_model: string; status: VectorStoreStatus; dims: number | null;
  metadata: Record<string, unknown> | null; expires_at: Date | string | null; api_key_id: string | null; user_id: string | null;
  created_at: Date | string; files_total: number; files_in_progress: number; files_completed: number; files_skipped: number;
  files_failed: number; chunk_count: string | number;
}

interface FileRow {
  store_id: string; file_id: string; status: StoreFileStatus; warning: string | null; chunk_count: number;
  created_at: Date | string; updated_at: Date | string;
}

const ms = (value: Date | string) => new Date(value).getTime();
const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));
const at = (param: number) => `to_timestamp($${param}::double precision / 1000)`;
const atOrNull = (param: number) => `CASE WHEN $${param}::double precision IS NULL THEN NULL ELSE ${at(param)} END`;
/** `now` (ms) decides expiry, so that one clock rules both the answer and the tests. */
export const LIVE = (param: number, alias = '') => `(${alias}expires_at IS NULL OR ${alias}expires_at > ${at(param)})`;

function toRecord(row: SummaryRow): VectorStoreRecord {
  return {
    id: row.id, tenantId: row.tenant_id, name: row.name, embeddingModel: row.embedding_model, status: row.status, dims: row.dims,
    metadata: row.metadata, expiresAt: row.expires_at === null ? null : ms(row.expires_at), apiKeyId: row.api_key_id,
    userId: row.user_id, createdAt: ms(row.created_at),
    fileCounts: { total: row.files_total, in_progress: row.files_in_progress, completed: row.files_completed, skipped: row.files_skipped, failed: row.files_failed },
    chunkCount: Number(row.chunk_count),
  };
}

function toFileRecord(row: FileRow): StoreFileRecord {
  return {
    storeId: row.store_id, fileId: row.file_id, status: row.status, warning: row.warning, chunkCount: row.chunk_count,
    createdAt: ms(row.created_at), updatedAt: ms(row.updated_at),
  };
}

export const newVectorStoreId = () => `vs-${orderedUuid()}`;
export const vectorStoreNotFound = (id: string) => new GatewayError('NOT_FOUND', `No vector store ${id}`, { id });

/** Recorded in progress, with no files yet: addStoreFiles attaches them and settles the status. */
export async function insertVectorStore(db: Queryable, id: string, store: NewVectorStore): Promise<VectorStoreRecord> {
  const rows = await db.query<SummaryRow>(
    `INSERT INTO vector_stores (id, tenant_id, name, embedding_model, metadata, expires_at, api_key_id, user_id)
     VALUES ($1, $2, $3, $4, $5, ${atOrNull(6)}, $7, $8)
     RETURNING *, 0 AS files_total, 0 AS files_in_progress, 0 AS files_completed, 0 AS files_skipped, 0 AS files_failed, 0 AS chunk_count`,
    [id, store.tenantId, store.name, store.embeddingModel, json(store.metadata), store.expiresAt, store.apiKeyId, store.userId],
  );
  return toRecord(rows[0]!);
}

/** A live store of the tenant with its counts, or null. */
export async function findVectorStore(db: Queryable, tenantId: string, id: string, now: number): Promise<VectorStoreRecord | null> {
  if (!isGatewayId('vs', id)) return null;
  const rows = await db.query<SummaryRow>(`SELECT * FROM vector_store_summaries WHERE tenant_id = $1 AND id = $2 AND ${LIVE(3)}`, [tenantId, id, now]);
  return rows[0] ? toRecord(rows[0]) : null;
}

/** The tenant's live stores, oldest first. */
export function listVectorStores<T>(db: Queryable, tenantId: string, page: PageRequest, now: number, toItem: (store: VectorStoreRecord) => T): Promise<Page<T>> {
  return listPage<SummaryRow, T>(db, {
    table: 'vector_store_summaries', where: ['tenant_id = $1', LIVE(2)], params: [tenantId, now], page, toItem: (row) => toItem(toRecord(row)),
  });
}

/** The list position just after one of the tenant's stores, for `after=<id>`; 400 when it has no such store. */
export async function vectorStorePositionAfter(db: Queryable, tenantId: string, id: string): Promise<PageRequest['after']> {
  const rows = !isGatewayId('vs', id) ? [] : await db.query<{ micros: string }>(
    'SELECT (extract(epoch FROM created_at) * 1000000)::bigint::text AS micros FROM vector_stores WHERE tenant_id = $1 AND id = $2', [tenantId, id],
  );
  if (!rows[0]) throw validationError([{ path: '/after', message: 'is not the id of a vector store of this tenant' }]);
  return { micros: rows[0].micros, id };
}

/** Locks a live store of the tenant for the rest of the transaction; false when there is none. */
async function lockStore(tx: Queryable, tenantId: string, id: string, now: number): Promise<boolean> {
  if (!isGatewayId('vs', id)) return false;
  const rows = await tx.query(`SELECT id FROM vector_stores WHERE tenant_id = $1 AND id = $2 AND ${LIVE(3)} FOR UPDATE`, [tenantId, id, now]);
  return rows.length > 0;
}

/** The spec's rule: completed once no file is still in progress (skipped and failed ones do not hold it back). */
async function settleStatus(tx: Queryable, id: string): Promise<VectorStoreStatus> {
  const rows = await tx.query<{ status: VectorStoreStatus }>(
    `UPDATE vector_stores SET status = CASE WHEN EXISTS (
       SELECT 1 FROM vector_store_files WHERE store_id = $1 AND status = 'in_progress') THEN 'in_progress' ELSE 'completed' END
     WHERE id = $1 RETURNING status`,
    [id],
  );
  return rows[0]!.status;
}

/** Changes what is given; null when the tenant has no such live store. */
export async function updateVectorStore(db: TransactionalDb, tenantId: string, id: string, changes: VectorStoreChanges, now: number): Promise<VectorStoreRecord | null> {
  const found = await db.transaction(async (tx) => {
    if (!(await lockStore(tx, tenantId, id, now))) return false;
    const sets: string[] = [];
    const params: unknown[] = [id];
    const set = (column: string, value: unknown, expression = (p: number) => `$${p}`) => {
      params.push(value);
      sets.push(`${column} = ${expression(params.length)}`);
    };
    if (changes.name !== undefined) set('name', changes.name);
    if (changes.metadata !== undefined) set('metadata', json(changes.metadata));
    if (changes.expiresAt !== undefined) set('expires_at', changes.expiresAt, atOrNull);
    if (sets.length > 0) await tx.query(`UPDATE vector_stores SET ${sets.join(', ')} WHERE id = $1`, params);
    if (changes.expiresAt !== undefined) {
      await tx.query(`UPDATE vector_store_chunks SET expires_at = ${atOrNull(2)} WHERE store_id = $1`, [id, changes.expiresAt]);
    }
    return true;
  });
  // Read after the commit: an expiry moved into the past makes the store gone at once.
  return found ? findVectorStore(db, tenantId, id, now) : null;
}

/** Deletes a live store with its files and chunks; false when the tenant had none. */
export async function deleteVectorStore(db: Queryable, tenantId: string, id: string, now: number): Promise<boolean> {
  if (!isGatewayId('vs', id)) return false;
  const rows = await db.query(`DELETE FROM vector_stores WHERE tenant_id = $1 AND id = $2 AND ${LIVE(3)} RETURNING id`, [tenantId, id, now]);
  return rows.length > 0;
}

/**
 * Attaches gateway files (in progress, to be ingested): `added` names those that were not attached yet, the ones
 * to ingest; a file attached before stays as it is. Null when the tenant has no such live store. The store is in
 * progress afterwards if any file is (with no file at all it is completed).
 */
export async function addStoreFiles(db: TransactionalDb, tenantId: string, id: string, fileIds: readonly string[], now: number): Promise<{ added: string[]; status: VectorStoreStatus } | null> {
  const bad = fileIds.flatMap((fileId, i) => (isGatewayId('file', fileId) ? [] : [{ path: `/file_ids/${i}`, message: 'is not a gateway file id' }]));
  if (bad.length > 0) throw validationError(bad);
  return db.transaction(async (tx) => {
    if (!(await lockStore(tx, tenantId, id, now))) return null;
    const rows = fileIds.length === 0 ? [] : await tx.query<{ file_id: string }>(
      `INSERT INTO vector_store_files (store_id, file_id, created_at, updated_at)
       SELECT $1, f, ${at(3)}, ${at(3)} FROM unnest($2::text[]) AS t (f)
       ON CONFLICT DO NOTHING RETURNING file_id`,
      [id, [...new Set(fileIds)], now],
    );
    return { added: rows.map((r) => r.file_id), status: await settleStatus(tx, id) };
  });
}

/** The store's files, in the order they were attached (empty when the tenant has no such live store). */
export async function listStoreFiles(db: Queryable, tenantId: string, id: string, now: number): Promise<StoreFileRecord[]> {
  if (!isGatewayId('vs', id)) return [];
  const rows = await db.query<FileRow>(
    `SELECT f.* FROM vector_store_files f JOIN vector_stores s ON s.id = f.store_id
     WHERE s.tenant_id = $1 AND s.id = $2 AND ${LIVE(3, 's.')} ORDER BY f.created_at, f.file_id`,
    [tenantId, id, now],
  );
  return rows.map(toFileRecord);
}

/**
 * Records how a file's ingestion ended and settles the store's status, in one transaction. Null when the store
 * or the file is gone (deleted, detached or expired meanwhile): nothing is recorded.
 */
export async function setStoreFileResult(db: TransactionalDb, tenantId: string, id: string, fileId: string, result: StoreFileResult, now: number): Promise<StoreFileRecord | null> {
  return db.transaction(async (tx) => {
    if (!(await lockStore(tx, tenantId, id, now))) return null;
    const kept = result.status === 'completed';
    const rows = await tx.query<FileRow>(
      `UPDATE vector_store_files SET status = $3, warning = $4, updated_at = ${at(5)}, chunk_count = CASE WHEN $6::boolean THEN chunk_count ELSE 0 END
       WHERE store_id = $1 AND file_id = $2 RETURNING *`,
      [id, fileId, result.status, kept ? null : result.warning, now, kept],
    );
    if (!rows[0]) return null;
    if (!kept) await tx.query('DELETE FROM vector_store_chunks WHERE store_id = $1 AND file_id = $2', [id, fileId]);
    await settleStatus(tx, id);
    return toFileRecord(rows[0]);
  });
}

/** Detaches a file and deletes its chunks; false when the store or the file was not there. */
export async function removeStoreFile(db: TransactionalDb, tenantId: string, id: string, fileId: string, now: number): Promise<boolean> {
  return db.transaction(async (tx) => {
    if (!(await lockStore(tx, tenantId, id, now))) return false;
    const rows = await tx.query('DELETE FROM vector_store_files WHERE store_id = $1 AND file_id = $2 RETURNING file_id', [id, fileId]);
    if (rows.length === 0) return false;
    await tx.query('DELETE FROM vector_store_chunks WHERE store_id = $1 AND file_id = $2', [id, fileId]);
    await settleStatus(tx, id);
    return true;
  });
}

/** Recomputes the store's status from its files (the ingestion job's safety net); null when it is gone. */
export async function refreshStoreStatus(db: TransactionalDb, tenantId: string, id: string, now: number): Promise<VectorStoreStatus | null> {
  return db.transaction(async (tx) => ((await lockStore(tx, tenantId, id, now)) ? settleStatus(tx, id) : null));
}
