/**
 * The `batch.settle` job: reads a terminal batch's results line by line as they stream in, sums each line's
 * usage, and reports the batch as one piece of metered work. `meterWork` records a batch id once, so a run
 * repeated after a crash records nothing twice; a throw (the provider or the recorder failing) retries the job.
 */
import type { Modality, Usage } from '../canonical/chat.ts';
import { batchesTranslatorFor, resultLines } from '../dispatch/batches-call.ts';
import type { ProviderBatch } from '../dispatch/provider-batches.ts';
import type { JobContext, JobHandler, JobResult } from '../jobs/types.ts';
import { findBatch, isTerminal } from '../store/batches.ts';
import type { MeteredWork } from '../pipeline/metered.ts';
import { batchTarget, type BatchJobDeps, type SettlePayload } from './batches-common.ts';

const MODALITY: Record<string, Modality> = {
  '/v1/chat/completions': 'chat', '/v1/messages': 'chat', '/v1/embeddings': 'embeddings', '/v1/completions': 'completion',
};

function add(sum: Usage, usage: Usage): void {
  sum.prompt_tokens += usage.prompt_tokens;
  sum.completion_tokens += usage.completion_tokens;
  sum.total_tokens += usage.total_tokens;
  const cached = usage.prompt_tokens_details?.cached_tokens;
  if (cached !== undefined) sum.prompt_tokens_details = { cached_tokens: (sum.prompt_tokens_details?.cached_tokens ?? 0) + cached };
  const reasoning = usage.completion_tokens_details?.reasoning_tokens;
  if (reasoning !== undefined) sum.completion_tokens_details = { reasoning_tokens: (sum.completion_tokens_details?.reasoning_tokens ?? 0) + reasoning };
}

function readPayload(payload: unknown): SettlePayload | null {
  const p = payload as Partial<SettlePayload> | null;
  if (!p || typeof p.batchId !== 'string' || !p.providerBatch || typeof p.providerBatch.id !== 'string') return null;
  return p as SettlePayload;
}

export function batchSettleHandler(deps: BatchJobDeps): JobHandler {
  return async (ctx: JobContext): Promise<JobResult> => {
    const payload = readPayload(ctx.job.payload);
    if (!payload) return { status: 'failed', error: 'the job payload is not a batch settlement' };
    const batch = await findBatch(deps.db, null, payload.batchId);
    if (!batch || !isTerminal(batch.status)) return { status: 'failed', error: `no terminal batch ${payload.batchId}` };
    const entry = batchTarget(deps, deps.config, deps.providers, batch.provider);
    if (!entry) throw new Error(`the provider ${batch.provider} of batch ${batch.id} is not configured`);
    const translator = batchesTranslatorFor(entry.provider, false);
    const usage: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
    const seen: ProviderBatch = payload.providerBatch;
    let upstreamModel: string | null = seen.model ?? null;
    for await (const line of resultLines(deps.call, entry.provider, entry.target, seen, ctx.signal)) {
      const result = translator.resultLine(line);
      if (result.usage) add(usage, result.usage);
      upstreamModel ??= result.model;
    }
    // A batch submitted here names its configured model; one registered from the provider is priced as the
    // configured model its provider's model name is served as.
    const model = batch.model ?? (upstreamModel === null ? null : deps.routing.servedAs(batch.provider, upstreamModel));
    const work: MeteredWork = {
      id: batch.id, source: 'batch',
      tenantId: batch.tenantId, organizationId: batch.organizationId, departmentId: batch.departmentId,
      callerKind: batch.callerKind, apiKeyId: batch.apiKeyId, userId: batch.userId,
      endpoint: batch.endpoint, modality: MODALITY[batch.endpoint] ?? 'chat', provider: batch.provider,
      requestedModel: batch.requestedModel, model, upstreamModel,
      usage, requests: { ...batch.requestCounts },
      status: batch.status as MeteredWork['status'],
      startedAt: batch.createdAt, endedAt: batch.completedAt ?? ctx.now(),
    };
    await deps.meterWork(work);
    return { status: 'done' };
  };
}
