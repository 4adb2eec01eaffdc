/**
 * Video job records (migration 0008_video_jobs): a gateway id (`video-<uuid>`), the provider task it names and
 * its state as the `video.poll` sweep last saw it. Callers read them by tenant; the sweep reads the due ones of
 * every tenant. The change to a terminal status is conditional on the job still running, so that of two
 * instances that both saw it end, one records it.
 */
import type { VideoJob, VideoStatus } from '../canonical/video.ts';
import type { Queryable } from './database.ts';
import { isGatewayId, orderedUuid } from './ids.ts';

/** Who started the job, as core/pipeline/recorded-caller.ts records a caller. */
export interface VideoJobCaller {
  tenantId: string;
  callerKind: 'api_key' | 'jwt';
  apiKeyId: string | null;
  userId: string | null;
  organizationId: string | null;
  departmentId: string | null;
}

export interface VideoJobRecord extends VideoJobCaller {
  id: string;
  requestedModel: string;
  model: string;
  provider: string;
  upstreamModel: string;
  providerTaskId: string;
  prompt: string;
  status: VideoStatus;
  progress: number;
  resultUrl: string | null;
  resultContentType: string | null;
  needsCredential: boolean;
  secondsRequested: number | null;
  secondsMade: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  /** ms since the epoch */
  createdAt: number;
  completedAt: number | null;
  nextPollAt: number;
  pollAttempts: number;
  metered: boolean;
}

export type NewVideoJob = Omit<VideoJobRecord, 'id' | 'completedAt' | 'pollAttempts' | 'metered' | 'errorCode' | 'errorMessage' | 'secondsMade' | 'resultUrl' | 'resultContentType' | 'needsCredential'>;

interface VideoJobRow {
  id: string; tenant_id: string; caller_kind: 'api_key' | 'jwt'; api_key_id: string | null; user_id: string | null;
  organization_id: string | null; department_id: string | null; requested_model: string; model: string; provider: string;
  upstream_model: string; provider_task_id: string; prompt: string; status: VideoStatus; progress: number | string;
  result_url: string | null; result_content_type: string | null; needs_credential: boolean; seconds_requested: number | null;
  seconds_made: number | string | null; error_code: string | null; error_message: string | null; created_at: Date | string;
  completed_at: Date | string | null; next_poll_at: Date | string; poll_attempts: number; metered: boolean;
}

const ms = (value: Date | string | null) => (value === null ? null : new Date(value).getTime());
const at = (param: number) => `to_timestamp($${param}::double precision / 1000)`;

function toRecord(row: VideoJobRow): VideoJobRecord {
  return {
    id: row.id, tenantId: row.tenant_id, callerKind: row.caller_kind, apiKeyId: row.api_key_id, userId: row.user_id,
    organizationId: row.organization_id, departmentId: row.department_id, requestedModel: row.requested_model, model: row.model,
    provider: row.provider, upstreamModel: row.upstream_model, providerTaskId: row.provider_task_id, prompt: row.prompt,
    status: row.status, progress: Number(row.progress), resultUrl: row.result_url, resultContentType: row.result_content_type,
    needsCredential: row.needs_credential, secondsRequested: row.seconds_requested,
    secondsMade: row.seconds_made === null ? null : Number(row.seconds_made), errorCode: row.error_code, errorMessage: row.error_message,
    createdAt: ms(row.created_at)!, completedAt: ms(row.completed_at), nextPollAt: ms(row.next_poll_at)!, pollAttempts: row.poll_attempts,
    metered: row.metered,
  };
}

export const newVideoJobId = () => `video-${orderedUuid()}`;
export const isEnded = (status: VideoStatus) => status === 'completed' || status === 'failed';

export async function insertVideoJob(db: Queryable, id: string, job: NewVideoJob): Promise<VideoJobRecord> {
  const rows = await db.query<VideoJobRow>(
    `INSERT INTO video_jobs (id, tenant_id, caller_kind, api_key_id, user_id, organization_id, department_id, requested_model, model,
       provider, upstream_model, provider_task_id, prompt, status, progress, seconds_requested, created_at, next_poll_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, ${at(17)}, ${at(18)}) RETURNING *`,
    [id, job.tenantId, job.callerKind, job.apiKeyId, job.userId, job.organizationId, job.departmentId, job.requestedModel, job.model,
      job.provider, job.upstreamModel, job.providerTaskId, job.prompt, job.status, job.progress, job.secondsRequested, job.createdAt, job.nextPollAt],
  );
  return toRecord(rows[0]!);
}

/** A job of the tenant, or (tenantId null: the sweep) of any tenant. */
export async function findVideoJob(db: Queryable, tenantId: string | null, id: string): Promise<VideoJobRecord | null> {
  if (!isGatewayId('video', id)) return null;
  const rows = tenantId === null
    ? await db.query<VideoJobRow>('SELECT * FROM video_jobs WHERE id = $1', [id])
    : await db.query<VideoJobRow>('SELECT * FROM video_jobs WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
  return rows[0] ? toRecord(rows[0]) : null;
}

/** What the sweep has to do: running jobs due for a poll, and ended jobs not yet metered; oldest first. */
export async function dueVideoJobs(db: Queryable, now: number, limit: number): Promise<VideoJobRecord[]> {
  const rows = await db.query<VideoJobRow>(
    `(SELECT * FROM video_jobs WHERE status IN ('queued', 'in_progress') AND next_poll_at <= ${at(1)} ORDER BY next_poll_at LIMIT $2)
     UNION ALL
     (SELECT * FROM video_jobs WHERE status IN ('completed', 'failed') AND NOT metered ORDER BY completed_at LIMIT $2)`,
    [now, limit],
  );
  return rows.map(toRecord);
}

/** A running job's new state (not terminal), its next poll, its failed polls reset. */
export async function saveProgress(db: Queryable, id: string, change: { status: VideoStatus; progress: number; nextPollAt: number }): Promise<void> {
  await db.query(
    `UPDATE video_jobs SET status = $2, progress = $3, poll_attempts = 0, next_poll_at = ${at(4)}
     WHERE id = $1 AND status IN ('queued', 'in_progress')`,
    [id, change.status, change.progress, change.nextPollAt],
  );
}

/** A poll that failed: counted, and the next one later. */
export async function savePollFailure(db: Queryable, id: string, nextPollAt: number): Promise<void> {
  await db.query(`UPDATE video_jobs SET poll_attempts = poll_attempts + 1, next_poll_at = ${at(2)} WHERE id = $1 AND status IN ('queued', 'in_progress')`, [id, nextPollAt]);
}

export interface VideoEnd {
  status: 'completed' | 'failed';
  resultUrl?: string;
  resultContentType?: string;
  needsCredential?: boolean;
  secondsMade?: number;
  error?: { code: string; message: string };
  completedAt: number;
}

/** The ended job when it was still running; null when another instance recorded its end first. */
export async function endVideoJob(db: Queryable, id: string, end: VideoEnd): Promise<VideoJobRecord | null> {
  const rows = await db.query<VideoJobRow>(
    `UPDATE video_jobs SET status = $2, progress = CASE WHEN $2 = 'completed' THEN 100 ELSE progress END, result_url = $3,
       result_content_type = $4, needs_credential = $5, seconds_made = $6, error_code = $7, error_message = $8, completed_at = ${at(9)}
     WHERE id = $1 AND status IN ('queued', 'in_progress') RETURNING *`,
    [id, end.status, end.resultUrl ?? null, end.resultContentType ?? null, end.needsCredential ?? false, end.secondsMade ?? null,
      end.error?.code ?? null, end.error?.message ?? null, end.completedAt],
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

export async function markMetered(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE video_jobs SET metered = true WHERE id = $1', [id]);
}

const seconds = (ms: number) => Math.floor(ms / 1000);

/**
 * The caller's view of a job. `contentUrl` is the gateway's content route for this job: where a completed job's
 * video is when fetching the provider's needs its credential; otherwise the provider's own URL is given.
 */
export function videoJobObject(job: VideoJobRecord, contentUrl: string | null): VideoJob {
  const done = job.status === 'completed';
  return {
    id: job.id, object: 'video.generation', model: job.requestedModel, status: job.status, progress: done ? 100 : job.progress,
    prompt: job.prompt, created_at: seconds(job.createdAt), completed_at: job.completedAt === null ? null : seconds(job.completedAt),
    url: !done || job.resultUrl === null ? null : job.needsCredential ? contentUrl : job.resultUrl,
    seconds: done ? job.secondsMade ?? job.secondsRequested : null,
    error: job.status === 'failed' ? { code: job.errorCode ?? 'UPSTREAM_ERROR', message: job.errorMessage ?? 'the provider failed the job' } : null,
  };
}
