/**
 * Realtime session records (migration 0009_realtime_sessions): a gateway id (`rt-<uuid>`), the settings applied
 * upstream on connect, who created it and its status, connecting -> connected -> closed. Each move is conditional
 * on the status before it, so that of two instances (the connecting one, the expiry job) one records it.
 */
import type { RealtimeSessionSettings } from '../canonical/realtime.ts';
import type { Queryable } from './database.ts';
import { isGatewayId, orderedUuid } from './ids.ts';

export type RealtimeStatus = 'connecting' | 'connected' | 'closed';

export interface RealtimeUsage {
  input_tokens: number;
  output_tokens: number;
  audio_seconds: number;
}

/** What the client asked for, applied upstream as the provider's session settings when it connects. */
export type RealtimeSettings = RealtimeSessionSettings;

/** Who created the session, as core/pipeline/recorded-caller.ts records a caller. */
export interface RealtimeCaller {
  tenantId: string;
  callerKind: 'api_key' | 'jwt';
  apiKeyId: string | null;
  userId: string | null;
  organizationId: string | null;
  departmentId: string | null;
}

/** What a session gains after its creation. */
interface RealtimeLifecycle {
  status: RealtimeStatus;
  connectedAt: number | null;
  closedAt: number | null;
  closeReason: string | null;
  usage: RealtimeUsage;
}

export interface RealtimeSessionRecord extends RealtimeCaller, RealtimeLifecycle {
  id: string;
  provider: string;
  requestedModel: string;
  model: string | null;
  upstreamModel: string;
  settings: RealtimeSettings;
  idleTimeoutSeconds: number;
  metadata: Record<string, unknown> | null;
  /** ms since the epoch */
  ticketExpiresAt: number;
  createdAt: number;
}

export type NewRealtimeSession = Omit<RealtimeSessionRecord, 'id' | keyof RealtimeLifecycle>;

interface Row {
  id: string; tenant_id: string; caller_kind: 'api_key' | 'jwt'; api_key_id: string | null; user_id: string | null;
  organization_id: string | null; department_id: string | null; provider: string; requested_model: string; model: string | null;
  upstream_model: string; settings: RealtimeSettings | string; idle_timeout_seconds: number; metadata: Record<string, unknown> | string | null;
  status: RealtimeStatus; ticket_expires_at: Date | string; created_at: Date | string; connected_at: Date | string | null;
  closed_at: Date | string | null; close_reason: string | null; input_tokens: number | string; output_tokens: number | string;
  audio_seconds: number | string;
}

const ms = (value: Date | string | null) => (value === null ? null : new Date(value).getTime());
const at = (param: number) => `to_timestamp($${param}::double precision / 1000)`;
const json = <T>(value: T | string): T => (typeof value === 'string' ? JSON.parse(value) as T : value);

function toRecord(row: Row): RealtimeSessionRecord {
  return {
    id: row.id, tenantId: row.tenant_id, callerKind: row.caller_kind, apiKeyId: row.api_key_id, userId: row.user_id,
    organizationId: row.organization_id, departmentId: row.department_id, provider: row.provider, requestedModel: row.requested_model,
    model: row.model, upstreamModel: row.upstream_model, settings: json(row.settings), idleTimeoutSeconds: row.idle_timeout_seconds,
    metadata: row.metadata === null ? null : json(row.metadata), status: row.status, ticketExpiresAt: ms(row.ticket_expires_at)!,
    createdAt: ms(row.created_at)!, connectedAt: ms(row.connected_at), closedAt: ms(row.closed_at), closeReason: row.close_reason,
    usage: { input_tokens: Number(row.input_tokens), output_tokens: Number(row.output_tokens), audio_seconds: Number(row.audio_seconds) },
  };
}

export const newRealtimeSessionId = () => `rt-${orderedUuid()}`;

export async function insertRealtimeSession(db: Queryable, id: string, s: NewRealtimeSession): Promise<RealtimeSessionRecord> {
  const rows = await db.query<Row>(
    `INSERT INTO realtime_sessions (id, tenant_id, caller_kind, api_key_id, user_id, organization_id, department_id, provider,
       requested_model, model, upstream_model, settings, idle_timeout_seconds, metadata, status, ticket_expires_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 'connecting', ${at(15)}, ${at(16)}) RETURNING *`,
    [id, s.tenantId, s.callerKind, s.apiKeyId, s.userId, s.organizationId, s.departmentId, s.provider, s.requestedModel, s.model,
      s.upstreamModel, JSON.stringify(s.settings), s.idleTimeoutSeconds, s.metadata === null ? null : JSON.stringify(s.metadata),
      s.ticketExpiresAt, s.createdAt],
  );
  return toRecord(rows[0]!);
}

/** A session of the tenant, or (tenantId null: the connect route, the expiry job) of any tenant. */
export async function findRealtimeSession(db: Queryable, tenantId: string | null, id: string): Promise<RealtimeSessionRecord | null> {
  if (!isGatewayId('rt', id)) return null;
  const rows = tenantId === null
    ? await db.query<Row>('SELECT * FROM realtime_sessions WHERE id = $1', [id])
    : await db.query<Row>('SELECT * FROM realtime_sessions WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
  return rows[0] ? toRecord(rows[0]) : null;
}

/** connecting -> connected; false when the session was no longer connecting. */
export async function markConnected(db: Queryable, id: string, now: number): Promise<boolean> {
  const rows = await db.query(`UPDATE realtime_sessions SET status = 'connected', connected_at = ${at(2)} WHERE id = $1 AND status = 'connecting' RETURNING id`, [id, now]);
  return rows.length === 1;
}

/** -> closed with its usage; the closed record, or null when another path closed it first. */
export async function closeRealtimeSession(db: Queryable, id: string, end: { at: number; reason: string; usage: RealtimeUsage }): Promise<RealtimeSessionRecord | null> {
  const rows = await db.query<Row>(
    `UPDATE realtime_sessions SET status = 'closed', closed_at = ${at(2)}, close_reason = $3, input_tokens = $4, output_tokens = $5, audio_seconds = $6
     WHERE id = $1 AND status <> 'closed' RETURNING *`,
    [id, end.at, end.reason, end.usage.input_tokens, end.usage.output_tokens, end.usage.audio_seconds],
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

/** A session whose ticket expired unredeemed: closed, nothing used; false when it had connected (or closed). */
export async function expireUnredeemed(db: Queryable, id: string, now: number): Promise<boolean> {
  const rows = await db.query(
    `UPDATE realtime_sessions SET status = 'closed', closed_at = ${at(2)}, close_reason = 'ticket_expired'
     WHERE id = $1 AND status = 'connecting' RETURNING id`,
    [id, now],
  );
  return rows.length === 1;
}

/** The wire form (the spec's Resources; the ticket only at creation, closed ones with their usage). */
export function realtimeSessionObject(s: RealtimeSessionRecord, extra: { gateway_ws_url: string; ticket?: string }): Record<string, unknown> {
  return {
    id: s.id, object: 'realtime.session', provider: s.provider, model: s.requestedModel, status: s.status,
    gateway_ws_url: extra.gateway_ws_url,
    ...(extra.ticket ? { subprotocol_hint: `ticket.${extra.ticket}`, ticket: extra.ticket } : {}),
    ticket_expires_at: Math.floor(s.ticketExpiresAt / 1000), created_at: Math.floor(s.createdAt / 1000),
    modalities: s.settings.modalities, idle_timeout_seconds: s.idleTimeoutSeconds, metadata: s.metadata,
    ...(s.status === 'closed' ? { closed_at: s.closedAt === null ? null : Math.floor(s.closedAt / 1000), close_reason: s.closeReason, usage: s.usage } : {}),
  };
}
