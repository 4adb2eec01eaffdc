/**
 * The file registry (migration 0004_files): gateway file ids (`file-<uuid>`) and the provider file each names.
 * Deployment-wide: every read resolves against the caller's tenant alone, never its key or user, which are only
 * recorded. An entry past its expires_at is gone for every reader; a job of the job runner deletes it and the
 * provider's file later.
 */
import { GatewayError, validationError } from '../errors.ts';
import type { Queryable } from './database.ts';
import { isGatewayId, orderedUuid } from './ids.ts';
import { listPage, type Page, type PageRequest } from './pagination.ts';

export interface FileRecord {
  id: string;
  tenantId: string;
  provider: string;
  providerFileId: string;
  filename: string;
  purpose: string;
  bytes: number;
  mimeType: string;
  status: string;
  metadata: Record<string, unknown> | null;
  /** ms since the epoch, or null */
  expiresAt: number | null;
  apiKeyId: string | null;
  userId: string | null;
  /** ms since the epoch */
  createdAt: number;
}

export type NewFile = Omit<FileRecord, 'id' | 'status' | 'createdAt'>;

interface FileRow {
  id: string;
  tenant_id: string;
  provider: string;
  provider_file_id: string;
  filename: string;
  purpose: string;
  bytes: string | number;
  mime_type: string;
  status: string;
  metadata: Record<string, unknown> | null;
  expires_at: Date | string | null;
  api_key_id: string | null;
  user_id: string | null;
  created_at: Date | string;
}

const ms = (value: Date | string) => new Date(value).getTime();

function toRecord(row: FileRow): FileRecord {
  return {
    id: row.id, tenantId: row.tenant_id, provider: row.provider, providerFileId: row.provider_file_id,
    filename: row.filename, purpose: row.purpose, bytes: Number(row.bytes), mimeType: row.mime_type, status: row.status,
    metadata: row.metadata, expiresAt: row.expires_at === null ? null : ms(row.expires_at),
    apiKeyId: row.api_key_id, userId: row.user_id, createdAt: ms(row.created_at),
  };
}

export const newFileId = () => `file-${orderedUuid()}`;

/** `now` (ms) decides expiry, so that one clock rules both the answer and the tests. */
const LIVE = (param: number) => `(expires_at IS NULL OR expires_at > to_timestamp($${param}::double precision / 1000))`;

export async function insertFile(db: Queryable, id: string, file: NewFile): Promise<FileRecord> {
  const rows = await db.query<FileRow>(
    `INSERT INTO files (id, tenant_id, provider, provider_file_id, filename, purpose, bytes, mime_type, metadata, expires_at, api_key_id, user_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, CASE WHEN $10::double precision IS NULL THEN NULL ELSE to_timestamp($10::double precision / 1000) END, $11, $12)
     RETURNING *`,
    [id, file.tenantId, file.provider, file.providerFileId, file.filename, file.purpose, file.bytes, file.mimeType,
      file.metadata === null ? null : JSON.stringify(file.metadata), file.expiresAt, file.apiKeyId, file.userId],
  );
  return toRecord(rows[0]!);
}

/** A live entry of the tenant, or null. */
export async function findFile(db: Queryable, tenantId: string, id: string, now: number): Promise<FileRecord | null> {
  if (!isGatewayId('file', id)) return null;
  const rows = await db.query<FileRow>(`SELECT * FROM files WHERE tenant_id = $1 AND id = $2 AND ${LIVE(3)}`, [tenantId, id, now]);
  return rows[0] ? toRecord(rows[0]) : null;
}

export const fileNotFound = (id: string) => new GatewayError('NOT_FOUND', `No file ${id}`, { id });

/** The tenant's live entries, oldest first, optionally of one purpose. */
export function listFiles<T>(db: Queryable, tenantId: string, purpose: string | undefined, page: PageRequest, now: number, toItem: (file: FileRecord) => T): Promise<Page<T>> {
  const where = ['tenant_id = $1', LIVE(2)];
  const params: unknown[] = [tenantId, now];
  if (purpose !== undefined) {
    params.push(purpose);
    where.push(`purpose = $${params.length}`);
  }
  return listPage<FileRow, T>(db, { table: 'files', where, params, page, toItem: (row) => toItem(toRecord(row)) });
}

/**
 * The page position just after one entry: what the official openai client sends (`after=<last id>`) instead of
 * the gateway's cursor when it pages on its own.
 */
export async function positionAfter(db: Queryable, tenantId: string, id: string): Promise<PageRequest['after']> {
  const rows = !isGatewayId('file', id) ? [] : await db.query<{ micros: string }>(
    `SELECT (extract(epoch FROM created_at) * 1000000)::bigint::text AS micros FROM files WHERE tenant_id = $1 AND id = $2`, [tenantId, id],
  );
  if (!rows[0]) throw validationError([{ path: '/after', message: 'is not the id of a file of this deployment' }]);
  return { micros: rows[0].micros, id };
}

/** Removes an entry; false when there was none. */
export async function removeFile(db: Queryable, tenantId: string, id: string): Promise<boolean> {
  const rows = await db.query<{ id: string }>('DELETE FROM files WHERE tenant_id = $1 AND id = $2 RETURNING id', [tenantId, id]);
  return rows.length > 0;
}

/**
 * A gateway file id -> the provider's file id, for a request about to go to `provider` (a batch's input file, a
 * chat `file` part). 404 NOT_FOUND for an id the deployment does not have (or no longer has); 400
 * FILE_PROVIDER_MISMATCH for a file uploaded to another provider: a provider cannot read another's files.
 */
export async function resolveFile(db: Queryable, tenantId: string, gatewayFileId: string, provider: string, now = Date.now()): Promise<string> {
  const file = await findFile(db, tenantId, gatewayFileId, now);
  if (!file) throw fileNotFound(gatewayFileId);
  if (file.provider !== provider) {
    throw new GatewayError('FILE_PROVIDER_MISMATCH', `File ${gatewayFileId} was uploaded to ${file.provider}, and this request goes to ${provider}`,
      { file: gatewayFileId, fileProvider: file.provider, provider });
  }
  return file.providerFileId;
}

/**
 * Entries past their expires_at at `now`, every tenant's, the longest expired first: the expiry sweep's batch.
 * `skipIds` and `skipProviders` leave out what this sweep already failed to delete (retried at the next one).
 */
export async function expiredFiles(db: Queryable, now: number, limit: number, skipIds: string[], skipProviders: string[]): Promise<FileRecord[]> {
  const rows = await db.query<FileRow>(
    `SELECT * FROM files
     WHERE expires_at <= to_timestamp($1::double precision / 1000)
       AND id NOT IN (SELECT jsonb_array_elements_text($2::jsonb))
       AND provider NOT IN (SELECT jsonb_array_elements_text($3::jsonb))
     ORDER BY expires_at, id LIMIT $4`,
    [now, JSON.stringify(skipIds), JSON.stringify(skipProviders), limit],
  );
  return rows.map(toRecord);
}
