/**
 * Stored responses (migration 0006_responses): a gateway id (`resp-<uuid>`), the provider's id, and the turn's
 * input and output items in full, so a continuation rebuilds its conversation from the chain of
 * previous_response_id links whatever the provider still remembers. Everything is read by tenant. The end of a
 * response is recorded only while it is in progress, so a cancel that got there first stays.
 */
import { GatewayError, validationError } from '../errors.ts';
import type { Queryable } from './database.ts';
import { isGatewayId, orderedUuid } from './ids.ts';
import { listPage, type Page, type PageRequest } from './pagination.ts';

export type ResponseState = 'in_progress' | 'completed' | 'failed' | 'cancelled' | 'incomplete';
export const RESPONSE_STATES: readonly ResponseState[] = ['in_progress', 'completed', 'failed', 'cancelled', 'incomplete'];

export interface ResponseUsage { input_tokens: number; output_tokens: number; total_tokens: number; [detail: string]: unknown }

export interface ResponseRecord {
  id: string;
  tenantId: string;
  provider: string;
  providerResponseId: string | null;
  requestedModel: string;
  /** The model the provider answered with, once it has. */
  model: string | null;
  previousResponseId: string | null;
  status: ResponseState;
  instructions: string | null;
  /** This turn's input items, in the array form. */
  input: unknown[];
  /** This turn's output items, in full. */
  output: unknown[];
  usage: ResponseUsage | null;
  /** {code, message} of a failed response. */
  error: { code: string; message: string } | null;
  metadata: Record<string, unknown> | null;
  callerKind: 'api_key' | 'jwt';
  apiKeyId: string | null;
  userId: string | null;
  /** ms since the epoch */
  createdAt: number;
  completedAt: number | null;
}

export type NewResponse = Pick<ResponseRecord,
  'tenantId' | 'provider' | 'requestedModel' | 'previousResponseId' | 'instructions' | 'input' | 'metadata' | 'callerKind' | 'apiKeyId' | 'userId'>;

export interface ResponseEnd {
  status: Exclude<ResponseState, 'in_progress'>;
  output: unknown[];
  usage: ResponseUsage | null;
  model: string | null;
  providerResponseId: string | null;
  error?: { code: string; message: string } | null;
  completedAt: number;
}

interface ResponseRow {
  id: string; tenant_id: string; provider: string; provider_response_id: string | null; requested_model: string; model: string | null;
  previous_response_id: string | null; status: ResponseState; instructions: string | null; input: unknown[]; output: unknown[];
  usage: ResponseUsage | null; error: { code: string; message: string } | null; metadata: Record<string, unknown> | null;
  caller_kind: 'api_key' | 'jwt'; api_key_id: string | null; user_id: string | null;
  created_at: Date | string; completed_at: Date | string | null;
}

const ms = (value: Date | string | null) => (value === null ? null : new Date(value).getTime());
const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));
const at = (param: number) => `to_timestamp($${param}::double precision / 1000)`;

function toRecord(row: ResponseRow): ResponseRecord {
  return {
    id: row.id, tenantId: row.tenant_id, provider: row.provider, providerResponseId: row.provider_response_id,
    requestedModel: row.requested_model, model: row.model, previousResponseId: row.previous_response_id, status: row.status,
    instructions: row.instructions, input: row.input, output: row.output, usage: row.usage, error: row.error, metadata: row.metadata,
    callerKind: row.caller_kind, apiKeyId: row.api_key_id, userId: row.user_id, createdAt: ms(row.created_at)!, completedAt: ms(row.completed_at),
  };
}

export const newResponseId = () => `resp-${orderedUuid()}`;
export const responseNotFound = (id: string) => new GatewayError('NOT_FOUND', `No response ${id}`, { id });

/** Recorded in progress before the provider is called, so a cancel or a crash finds it. */
export async function insertResponse(db: Queryable, id: string, response: NewResponse): Promise<ResponseRecord> {
  const rows = await db.query<ResponseRow>(
    `INSERT INTO responses (id, tenant_id, provider, requested_model, previous_response_id, status, instructions, input, metadata,
       caller_kind, api_key_id, user_id)
     VALUES ($1, $2, $3, $4, $5, 'in_progress', $6, $7, $8, $9, $10, $11) RETURNING *`,
    [id, response.tenantId, response.provider, response.requestedModel, response.previousResponseId, response.instructions,
      JSON.stringify(response.input), json(response.metadata), response.callerKind, response.apiKeyId, response.userId],
  );
  return toRecord(rows[0]!);
}

export async function findResponse(db: Queryable, tenantId: string, id: string): Promise<ResponseRecord | null> {
  if (!isGatewayId('resp', id)) return null;
  const rows = await db.query<ResponseRow>('SELECT * FROM responses WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
  return rows[0] ? toRecord(rows[0]) : null;
}

/**
 * The conversation ending with `id`, oldest first: `id` and its predecessors by previous_response_id, at most
 * `maxDepth` of them, stopping at a link that is gone (deleted). Empty when `id` itself is not the tenant's.
 */
export async function responseChain(db: Queryable, tenantId: string, id: string, maxDepth: number): Promise<ResponseRecord[]> {
  if (!isGatewayId('resp', id)) return [];
  const rows = await db.query<ResponseRow & { depth: number }>(
    `WITH RECURSIVE chain AS (
       SELECT r.*, 1 AS depth FROM responses r WHERE r.tenant_id = $1 AND r.id = $2
       UNION ALL
       SELECT p.*, chain.depth + 1 FROM responses p JOIN chain ON p.id = chain.previous_response_id
       WHERE p.tenant_id = $1 AND chain.depth < $3
     )
     SELECT * FROM chain ORDER BY depth DESC`,
    [tenantId, id, maxDepth],
  );
  return rows.map(toRecord);
}

/** Records the end; null when the response was no longer in progress (cancelled first): that state stays. */
export async function finishResponse(db: Queryable, id: string, end: ResponseEnd): Promise<ResponseRecord | null> {
  const rows = await db.query<ResponseRow>(
    `UPDATE responses SET status = $2, output = $3, usage = $4, model = COALESCE($5, model),
       provider_response_id = COALESCE($6, provider_response_id), error = $7, completed_at = ${at(8)}
     WHERE id = $1 AND status = 'in_progress' RETURNING *`,
    [id, end.status, JSON.stringify(end.output), json(end.usage), end.model, end.providerResponseId, json(end.error ?? null), end.completedAt],
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

/**
 * Cancels a response still in progress, keeping what it had produced (`output`, `usage` when known); a finished
 * one is returned unchanged. Null when the tenant has no such response.
 */
export async function cancelResponse(db: Queryable, tenantId: string, id: string, now: number, partial?: { output: unknown[]; usage: ResponseUsage | null }): Promise<ResponseRecord | null> {
  const rows = await db.query<ResponseRow>(
    `UPDATE responses SET status = 'cancelled', completed_at = ${at(3)},
       output = COALESCE($4, output), usage = COALESCE($5, usage)
     WHERE tenant_id = $1 AND id = $2 AND status = 'in_progress' RETURNING *`,
    [tenantId, id, now, partial ? JSON.stringify(partial.output) : null, json(partial?.usage ?? null)],
  );
  return rows[0] ? toRecord(rows[0]) : findResponse(db, tenantId, id);
}

/**
 * The output a cancelled response had produced, recorded by the instance that was streaming it once it saw the
 * cancel made elsewhere (only while the record holds no output yet).
 */
export async function saveCancelledOutput(db: Queryable, id: string, output: unknown[], usage: ResponseUsage | null): Promise<void> {
  await db.query(
    `UPDATE responses SET output = $2, usage = COALESCE($3, usage) WHERE id = $1 AND status = 'cancelled' AND output = '[]'::jsonb`,
    [id, JSON.stringify(output), json(usage)],
  );
}

/** True when the tenant had the response. */
export async function deleteResponse(db: Queryable, tenantId: string, id: string): Promise<boolean> {
  const rows = await db.query<{ id: string }>('DELETE FROM responses WHERE tenant_id = $1 AND id = $2 RETURNING id', [tenantId, id]);
  return rows.length > 0;
}

export function listResponses<T>(db: Queryable, tenantId: string, page: PageRequest, toItem: (response: ResponseRecord) => T): Promise<Page<T>> {
  return listPage<ResponseRow, T>(db, { table: 'responses', where: ['tenant_id = $1'], params: [tenantId], page, toItem: (row) => toItem(toRecord(row)) });
}

/** The list position just after one of the tenant's responses, for `after=<id>`; 400 when it has no such response. */
export async function responsePositionAfter(db: Queryable, tenantId: string, id: string): Promise<PageRequest['after']> {
  const rows = await db.query<{ micros: string }>(
    'SELECT (extract(epoch FROM created_at) * 1000000)::bigint::text AS micros FROM responses WHERE tenant_id = $1 AND id = $2', [tenantId, id],
  );
  if (!rows[0]) throw validationError([{ path: '/after', message: 'is not the id of a response of this tenant' }]);
  return { micros: rows[0].micros, id };
}
