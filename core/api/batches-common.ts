/**
 * What the batch endpoints (batches.ts) and the batch jobs (batches-poll.ts, batches-settle.ts) share: the Batch
 * object callers see, the job kinds and their keys, the polling cadence, and the providers as batches reach them.
 */
import type { GatewayConfig } from '../config/types.ts';
import type { CallDeps } from '../dispatch/exchange.ts';
import { passthroughTargets, type PassthroughEntry } from '../dispatch/passthrough.ts';
import type { ProviderBatch } from '../dispatch/provider-batches.ts';
import type { ProviderRegistry } from '../dispatch/provider-registry.ts';
import type { RoutingTable } from '../dispatch/routing.ts';
import type { JobQueue, JobSpec } from '../jobs/types.ts';
import type { Log } from '../log.ts';
import type { MeteredWork } from '../pipeline/metered.ts';
import type { BatchRecord } from '../store/batches.ts';
import type { Database } from '../store/database.ts';

export const BATCH_POLL = 'batch.poll';
export const BATCH_SETTLE = 'batch.settle';

const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));

/** The spec's Batch, with the gateway's own fields (DESIGN: output_file_id / error_file_id; cancel_requested_at). */
export function batchObject(batch: BatchRecord) {
  return {
    id: batch.id, object: 'batch' as const, provider: batch.provider, provider_batch_id: batch.providerBatchId,
    endpoint: batch.endpoint, status: batch.status, request_counts: batch.requestCounts, created_at: seconds(batch.createdAt),
    metadata: batch.metadata, output_file_id: batch.outputFileId, error_file_id: batch.errorFileId,
    completion_webhook_url: batch.webhookUrl, cancel_requested_at: seconds(batch.cancelRequestedAt), completed_at: seconds(batch.completedAt),
  };
}

/** The delay between two status polls of a batch of this provider family (config `batches.pollIntervalMs`). */
export function pollInterval(config: GatewayConfig, family: string): number {
  const intervals = config.batches.pollIntervalMs;
  return Object.hasOwn(intervals, family) ? intervals[family]! : intervals.default;
}

/** One live poll per batch: enqueueing it again while it waits is a no-op. */
export const pollJob = (batchId: string, runAt: number): JobSpec => ({ kind: BATCH_POLL, key: `${BATCH_POLL}:${batchId}`, payload: { batchId }, runAt });

/** Settlement reads the results the terminal poll saw: the provider's batch as it was then. */
export interface SettlePayload { batchId: string; providerBatch: ProviderBatch }
export const settleJob = (payload: SettlePayload): JobSpec => ({ kind: BATCH_SETTLE, key: `${BATCH_SETTLE}:${payload.batchId}`, payload });

/** What the batch jobs need from the gateway. */
export interface BatchJobDeps {
  config: GatewayConfig;
  db: Database;
  providers: ProviderRegistry;
  /** Prices a registered batch: its provider's model name -> the configured model (RoutingTable.servedAs). */
  routing: Pick<RoutingTable, 'servedAs'>;
  call: CallDeps;
  jobs: JobQueue;
  now(): number;
  logger: Log;
  /** The gateway's meterWork: rejects when a plugin could not record the work, and settlement is retried. */
  meterWork(work: MeteredWork): Promise<void>;
}

/** The configured, enabled providers, as the passthrough reaches them (one table per gateway). */
const tables = new WeakMap<object, Map<string, PassthroughEntry>>();
export function batchTarget(owner: object, config: GatewayConfig, providers: ProviderRegistry, slug: string): PassthroughEntry | undefined {
  let targets = tables.get(owner);
  if (!targets) tables.set(owner, (targets = passthroughTargets(config, providers)));
  return targets.get(slug);
}
