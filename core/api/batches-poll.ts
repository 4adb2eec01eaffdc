/**
 * The `batch.poll` job: one status request to the provider per run, at the provider family's cadence, until the
 * batch is terminal. The terminal change is one transaction: the status (conditional on the one it replaces, so
 * it is made once however many instances saw it), the final counts, the result files registered as gateway
 * files, and the jobs that follow it (the completion webhook when a URL was given, and settlement).
 */
import { batchStatus, locateBatchResults, resultFileInfo } from '../dispatch/batches-call.ts';
import type { PassthroughEntry } from '../dispatch/passthrough.ts';
import type { ProviderBatch } from '../dispatch/provider-batches.ts';
import type { JobContext, JobHandler, JobResult } from '../jobs/types.ts';
import { changeStatus, findBatch, isTerminal, saveCounts, type BatchRecord } from '../store/batches.ts';
import { insertFile, newFileId } from '../store/files.ts';
import { webhookDeliveryJob } from '../webhooks/deliver.ts';
import { BATCH_COMPLETED, batchCompletedPayload, type TerminalBatchStatus } from '../webhooks/payload.ts';
import { batchTarget, pollInterval, settleJob, type BatchJobDeps } from './batches-common.ts';

interface ResultFile { providerFileId: string; gatewayId: string; bytes: number; filename: string }

const batchIdOf = (payload: unknown) => {
  const id = (payload as { batchId?: unknown } | null)?.batchId;
  return typeof id === 'string' ? id : null;
};

/** A result file's registry entry-to-be; its size and name come from the provider. */
async function resultFile(deps: BatchJobDeps, entry: PassthroughEntry, batch: ProviderBatch, providerFileId: string | null, signal: AbortSignal): Promise<ResultFile | null> {
  if (providerFileId === null) return null;
  const info = await resultFileInfo(deps.call, entry.provider, entry.target, batch, providerFileId, signal);
  if (!info) return null;
  return { providerFileId, gatewayId: newFileId(), ...info };
}

async function finish(deps: BatchJobDeps, batch: BatchRecord, entry: PassthroughEntry, status: ProviderBatch, signal: AbortSignal): Promise<void> {
  const seen = await locateBatchResults(deps.call, entry.provider, entry.target, status, signal);
  const output = await resultFile(deps, entry, seen, seen.outputFileId, signal);
  const errors = await resultFile(deps, entry, seen, seen.errorFileId, signal);
  const completedAt = deps.now();
  await deps.db.transaction(async (tx) => {
    const done = await changeStatus(tx, batch.id, {
      from: batch.status, to: seen.status, requestCounts: seen.counts,
      outputFileId: output?.gatewayId ?? null, errorFileId: errors?.gatewayId ?? null, completedAt,
    });
    if (!done) return; // another instance recorded a change first
    for (const file of [output, errors]) {
      if (!file) continue;
      await insertFile(tx, file.gatewayId, {
        tenantId: batch.tenantId, provider: batch.provider, providerFileId: file.providerFileId, filename: file.filename,
        purpose: 'batch_output', bytes: file.bytes, mimeType: 'application/jsonl', metadata: { batch_id: batch.id },
        expiresAt: null, apiKeyId: batch.apiKeyId, userId: batch.userId,
      });
    }
    if (done.webhookUrl && done.webhookSecret) {
      const body = JSON.stringify(batchCompletedPayload({
        id: done.id, provider: done.provider, endpoint: done.endpoint, status: done.status as TerminalBatchStatus,
        requestCounts: done.requestCounts, providerBatchId: done.providerBatchId,
        outputProviderFileId: seen.outputFileId, errorProviderFileId: seen.errorFileId, completedAt, metadata: done.metadata,
      }));
      await deps.jobs.enqueue(webhookDeliveryJob({ url: done.webhookUrl, secret: done.webhookSecret, body, eventType: BATCH_COMPLETED, deliveryId: done.id }), tx);
    }
    await deps.jobs.enqueue(settleJob({ batchId: done.id, providerBatch: seen }), tx);
  });
}

export function batchPollHandler(deps: BatchJobDeps): JobHandler {
  return async (ctx: JobContext): Promise<JobResult> => {
    const batchId = batchIdOf(ctx.job.payload);
    if (!batchId) return { status: 'failed', error: 'the job payload names no batch' };
    const batch = await findBatch(deps.db, null, batchId);
    if (!batch) return { status: 'failed', error: `no batch ${batchId}` };
    if (isTerminal(batch.status)) return { status: 'done' };
    const entry = batchTarget(deps, deps.config, deps.providers, batch.provider);
    const next = ctx.now() + pollInterval(deps.config, entry?.provider.family ?? '');
    if (!entry) {
      // The operator may configure the provider again: the batch waits for it.
      deps.logger.warn({ batchId, provider: batch.provider }, 'batch poll: the provider is not configured; polling again later');
      return { status: 'reschedule', at: next };
    }
    try {
      const seen = await batchStatus(deps.call, entry.provider, entry.target, batch.providerBatchId, ctx.signal);
      if (isTerminal(seen.status)) {
        await finish(deps, batch, entry, seen, ctx.signal);
        return { status: 'done' };
      }
      // Only forwards: a provider still validating after the gateway saw it running changes nothing.
      if (seen.status === 'in_progress' && batch.status === 'validating') {
        await changeStatus(deps.db, batch.id, { from: batch.status, to: seen.status, requestCounts: seen.counts });
      } else {
        await saveCounts(deps.db, batch.id, batch.status, seen.counts);
      }
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      // A provider that fails to answer is asked again at the next poll, as long as the batch lives.
      deps.logger.warn({ batchId, provider: batch.provider, err }, 'batch poll failed; polling again later');
    }
    return { status: 'reschedule', at: next };
  };
}
