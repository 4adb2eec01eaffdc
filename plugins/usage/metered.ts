/**
 * Work metered outside a request (a batch that ended: core/pipeline/metered.ts) becomes ONE usage record,
 * standing for all its requests (`requests`). It is written at once, not through the buffered recorder, so that
 * the reporter knows it is stored when the hook returns; its id is derived from the work's id, so that the same
 * work reported again (a retry, or two instances polling) inserts nothing (ON CONFLICT (id) DO NOTHING).
 *
 * The record's time (created_at) is when the work ended: its cost is known then, and the budget plugin charges
 * the periods holding that time, so that counters rebuilt from these records agree with the charged ones.
 * Status: completed stays completed; failed and expired are `failed` with error code BATCH_FAILED or
 * BATCH_EXPIRED (VIDEO_FAILED for a video job); cancelled is `aborted`. Whatever the status, the tokens the
 * provider billed are recorded.
 */
import { createHash } from 'node:crypto';
import { costUsd } from '../../core/canonical/pricing.ts';
import { audioSeconds, tokenCount } from '../../core/canonical/units.ts';
import type { MeteredWork } from '../../core/pipeline/metered.ts';
import type { PluginQueryable, PluginServices } from '../../core/pipeline/services.ts';
import { insertUsageRecords, safeText, type UsageRecord, type UsageStatus } from './record.ts';

/** A name-based UUID (version 5 layout, SHA-1): the same work id always gives the same record id. */
export function meteredRecordId(workId: string): string {
  const hash = createHash('sha1').update(`aigw-metered:${workId}`).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const STATUS: Record<MeteredWork['status'], { status: UsageStatus; errorCode: string | null }> = {
  completed: { status: 'completed', errorCode: null },
  failed: { status: 'failed', errorCode: 'BATCH_FAILED' },
  expired: { status: 'failed', errorCode: 'BATCH_EXPIRED' },
  cancelled: { status: 'aborted', errorCode: null },
};

export function meteredRecord(work: MeteredWork, services: Pick<PluginServices, 'config'>): UsageRecord {
  const model = work.model === null ? undefined : services.config.models.find((m) => m.id === work.model);
  const usage = work.usage;
  const prompt = tokenCount(usage.prompt_tokens);
  const completion = tokenCount(usage.completion_tokens);
  const cached = tokenCount(usage.prompt_tokens_details?.cached_tokens);
  const { status, errorCode: batchCode } = STATUS[work.status];
  // A video job that failed is one request that failed, not a batch.
  const errorCode = work.source === 'video' && batchCode !== null ? 'VIDEO_FAILED' : batchCode;
  return {
    id: meteredRecordId(work.id),
    requestId: work.id,
    createdAt: work.endedAt,
    tenantId: safeText(work.tenantId) ?? 'default',
    organizationId: safeText(work.organizationId),
    departmentId: safeText(work.departmentId),
    callerKind: work.callerKind,
    apiKeyId: work.callerKind === 'api_key' ? work.apiKeyId : null,
    userId: work.callerKind === 'jwt' ? safeText(work.userId) : null,
    endpoint: work.endpoint,
    modality: work.modality,
    stream: false,
    provider: work.provider,
    requestedModel: safeText(work.requestedModel),
    model: model ? model.id : null,
    upstreamModel: work.upstreamModel,
    promptTokens: prompt,
    completionTokens: completion,
    cachedTokens: cached,
    reasoningTokens: tokenCount(usage.completion_tokens_details?.reasoning_tokens),
    totalTokens: typeof usage.total_tokens === 'number' ? tokenCount(usage.total_tokens) : prompt + completion,
    // Batches carry chat, completion and embeddings lines: no search units.
    searchUnits: 0,
    estimated: false,
    videoSeconds: audioSeconds(work.videoSeconds),
    audioSeconds: audioSeconds(work.audioSeconds),
    costUsd: costUsd(model?.pricing, {
      prompt_tokens: prompt, completion_tokens: completion, prompt_tokens_details: { cached_tokens: cached },
      video_seconds: audioSeconds(work.videoSeconds), audio_seconds: audioSeconds(work.audioSeconds),
    }),
    latencyMs: Math.max(0, work.endedAt - work.startedAt),
    ttfbMs: null,
    status,
    errorCode,
    requests: Math.min(tokenCount(work.requests.total), 2_147_483_647),
  };
}

/** The usage plugin's onMeteredWork: one row per work, written now. */
export async function recordMeteredWork(db: PluginQueryable, work: MeteredWork, services: Pick<PluginServices, 'config'>): Promise<void> {
  await insertUsageRecords(db, [meteredRecord(work, services)]);
}
