/**
 * Batch records (migration 0005_batches): a gateway batch id (`batch-<uuid>`), the provider batch it names and
 * its status as polling last saw it. Callers read them by tenant; the polling and settlement jobs by id alone.
 * A status change is conditional on the status it replaces, so that of two instances that both saw a change
 * one records it.
 */
import { GatewayError } from '../errors.ts';
import type { Queryable } from './database.ts';
import { isGatewayId, orderedUuid } from './ids.ts';
import { listPage, type Page, type PageRequest } from './pagination.ts';

export type BatchState = 'validating' | 'in_progress' | 'completed' | 'failed' | 'cancelled' | 'expired';
export interface RequestCounts { total: number; completed: number; failed: number }

export interface BatchRecord {
  id: string;
  tenantId: string;
  provider: string;
  providerBatchId: string;
  endpoint: string;
  status: BatchState;
  requestCounts: RequestCounts;
  metadata: Record<string, unknown> | null;
  outputFileId: string | null;
  errorFileId: string | null;
  webhookUrl: string | null;
  /** Never shown after the submit response, never logged. */
  webhookSecret: string | null;
  callerKind: 'api_key' | 'jwt';
  apiKeyId: string | null;
  userId: string | null;
  organizationId: string | null;
  departmentId: string | null;
  requestedModel: string | null;
  /** The configured model it resolved to, after the caller's policy overrides: its pricing prices the batch. */
  model: string | null;
  /** ms since the epoch, or null */
  cancelRequestedAt: number | null;
  completedAt: number | null;
  createdAt: number;
}

export type NewBatch = Omit<BatchRecord, 'id' | 'outputFileId' | 'errorFileId' | 'cancelRequestedAt' | 'completedAt' | 'createdAt'>;

interface BatchRow {
  id: string; tenant_id: string; provider: string; provider_batch_id: string; endpoint: string; status: BatchState;
  request_counts: RequestCounts; metadata: Record<string, unknown> | null; output_file_id: string | null; error_file_id: string | null;
  webhook_url: string | null; webhook_secret: string | null; caller_kind: 'api_key' | 'jwt'; api_key_id: string | null;
  user_id: string | null; organization_id: string | null; department_id: string | null; requested_model: string | null; model: string | null;
  cancel_requested_at: Date | string | null; completed_at: Date | string | null; created_at: Date | string;
}

const ms = (value: Date | string | null) => (value === null ? null : new Date(value).getTime());

function toRecord(row: BatchRow): BatchRecord {
  return {
    id: row.id, tenantId: row.tenant_id, provider: row.provider, providerBatchId: row.provider_batch_id, endpoint: row.endpoint,
    status: row.status, requestCounts: row.request_counts, metadata: row.metadata, outputFileId: row.output_file_id,
    errorFileId: row.error_file_id, webhookUrl: row.webhook_url, webhookSecret: row.webhook_secret, callerKind: row.caller_kind,
    apiKeyId: row.api_key_id, userId: row.user_id, organizationId: row.organization_id, departmentId: row.department_id,
    requestedModel: row.requested_model, model: row.model, cancelRequestedAt: ms(row.cancel_requested_at), completedAt: ms(row.completed_at),
    createdAt: ms(row.created_at)!,
  };
}

export const newBatchId = () => `batch-${orderedUuid()}`;
export const batchNotFound = (id: string) => new GatewayError('NOT_FOUND', `No batch ${id}`, { id });
export const isTerminal = (status: BatchState) => status !== 'validating' && status !== 'in_progress';

const at = (param: number) => `to_timestamp($${param}::double precision / 1000)`;

export async function insertBatch(db: Queryable, id: string, batch: NewBatch): Promise<BatchRecord> {
  const rows = await db.query<BatchRow>(
    `INSERT INTO batches (id, tenant_id, provider, provider_batch_id, endpoint, status, request_counts, metadata, webhook_url,
       webhook_secret, caller_kind, api_key_id, user_id, organization_id, department_id, requested_model, model)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) RETURNING *`,
    [id, batch.tenantId, batch.provider, batch.providerBatchId, batch.endpoint, batch.status, JSON.stringify(batch.requestCounts),
      batch.metadata === null ? null : JSON.stringify(batch.metadata), batch.webhookUrl, batch.webhookSecret, batch.callerKind,
      batch.apiKeyId, batch.userId, batch.organizationId, batch.departmentId, batch.requestedModel, batch.model],
  );
  return toRecord(rows[0]!);
}

/** A batch of the tenant, or (tenantId null: the jobs) of any tenant. */
export async function findBatch(db: Queryable, tenantId: string | null, id: string): Promise<BatchRecord | null> {
  if (!isGatewayId('batch', id)) return null;
  const rows = tenantId === null
    ? await db.query<BatchRow>('SELECT * FROM batches WHERE id = $1', [id])
    : await db.query<BatchRow>('SELECT * FROM batches WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
  return rows[0] ? toRecord(rows[0]) : null;
}

/** The tenant's record of a provider's batch, when one was submitted or registered through the gateway. */
export async function findByProviderBatch(db: Queryable, tenantId: string, provider: string, providerBatchId: string): Promise<BatchRecord | null> {
  const rows = await db.query<BatchRow>(
    'SELECT * FROM batches WHERE tenant_id = $1 AND provider = $2 AND provider_batch_id = $3 ORDER BY created_at LIMIT 1', [tenantId, provider, providerBatchId],
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

export function listBatches<T>(db: Queryable, tenantId: string, page: PageRequest, toItem: (batch: BatchRecord) => T): Promise<Page<T>> {
  return listPage<BatchRow, T>(db, { table: 'batches', where: ['tenant_id = $1'], params: [tenantId], page, toItem: (row) => toItem(toRecord(row)) });
}

/** Records that a cancel was sent to the provider; the first request's time stays. */
export async function markCancelRequested(db: Queryable, id: string, now: number): Promise<BatchRecord | null> {
  const rows = await db.query<BatchRow>(
    `UPDATE batches SET cancel_requested_at = COALESCE(cancel_requested_at, ${at(2)}) WHERE id = $1 RETURNING *`, [id, now],
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

export interface StatusChange {
  from: BatchState;
  to: BatchState;
  requestCounts: RequestCounts;
  /** Terminal changes only. */
  outputFileId?: string | null;
  errorFileId?: string | null;
  completedAt?: number;
}

/** The new record when the batch was still in `from`; null when another change got there first. */
export async function changeStatus(db: Queryable, id: string, change: StatusChange): Promise<BatchRecord | null> {
  const rows = await db.query<BatchRow>(
    `UPDATE batches SET status = $3, request_counts = $4, output_file_id = COALESCE($5, output_file_id),
       error_file_id = COALESCE($6, error_file_id),
       completed_at = CASE WHEN $7::double precision IS NULL THEN completed_at ELSE ${at(7)} END
     WHERE id = $1 AND status = $2 RETURNING *`,
    [id, change.from, change.to, JSON.stringify(change.requestCounts), change.outputFileId ?? null, change.errorFileId ?? null, change.completedAt ?? null],
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

/** Counts may move while the status does not: saved as they come, without touching the status. */
export async function saveCounts(db: Queryable, id: string, status: BatchState, counts: RequestCounts): Promise<void> {
  await db.query('UPDATE batches SET request_counts = $3 WHERE id = $1 AND status = $2', [id, status, JSON.stringify(counts)]);
}
