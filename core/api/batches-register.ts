/**
 * Registration: POST /v1/batches with `provider_batch_id` instead of `requests` puts a batch made on the provider
 * outside the gateway under polling, as if it had been submitted here. The provider is asked for the batch once
 * (404 NOT_FOUND when it has none, and nothing is recorded); the record and its first poll are written in one
 * transaction. A provider batch the tenant already has a record of answers that record, unchanged.
 */
import { batchStatus, checkBatchEndpoint } from '../dispatch/batches-call.ts';
import type { PassthroughEntry } from '../dispatch/passthrough.ts';
import type { UpstreamErrorDetails } from '../dispatch/upstream-errors.ts';
import { GatewayError } from '../errors.ts';
import type { LocalEndpointDeps } from '../ingress/endpoint.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import { findByProviderBatch, insertBatch, isTerminal, newBatchId } from '../store/batches.ts';
import { newWebhookSecret } from '../webhooks/sign.ts';
import { callerOf } from '../pipeline/recorded-caller.ts';
import { webhookUrl } from './batches-caller.ts';
import { batchObject, pollInterval, pollJob } from './batches-common.ts';
import type { BatchSubmit } from './batches-request.ts';

export async function registerBatch(
  deps: LocalEndpointDeps, ctx: GatewayContext, entry: PassthroughEntry, submit: BatchSubmit, providerBatchId: string,
): Promise<Record<string, unknown>> {
  // Polling only is enough: registration is for batches the gateway did not submit.
  checkBatchEndpoint(entry.provider, submit.endpoint, false);
  const url = webhookUrl(deps, submit.webhookUrl);
  const caller = callerOf(ctx);
  let seen;
  try {
    seen = await batchStatus(deps, entry.provider, entry.target, providerBatchId, ctx.state.gw.signal);
  } catch (err) {
    if (err instanceof GatewayError && (err.details as UpstreamErrorDetails | null)?.upstreamStatus === 404) {
      throw new GatewayError('NOT_FOUND', `${submit.provider} has no batch ${providerBatchId}`, { provider: submit.provider, provider_batch_id: providerBatchId });
    }
    throw err;
  }
  const secret = url === null ? null : newWebhookSecret();
  const now = deps.clock.now();
  const registered = await deps.db.transaction(async (tx) => {
    // Two registrations of one provider batch at once: the second waits here, then finds the first's record.
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`batch-register:${caller.tenantId}:${submit.provider}:${seen.id}`]);
    const existing = await findByProviderBatch(tx, caller.tenantId, submit.provider, seen.id);
    if (existing) return { record: existing, created: false };
    const id = newBatchId();
    // A batch that already ended is recorded as running and polled at once: that poll makes the terminal change
    // (files, webhook, settlement) exactly as for any batch.
    const ended = isTerminal(seen.status);
    const record = await insertBatch(tx, id, {
      ...caller, provider: submit.provider, providerBatchId: seen.id, endpoint: submit.endpoint,
      status: ended ? 'in_progress' : seen.status, requestCounts: seen.counts,
      metadata: submit.metadata, webhookUrl: url, webhookSecret: secret, requestedModel: null, model: null,
    });
    await deps.jobs.enqueue(pollJob(id, ended ? now : now + pollInterval(deps.config, entry.provider.family)), tx);
    return { record, created: true };
  });
  const body = batchObject(registered.record);
  return registered.created && secret !== null ? { ...body, webhook_secret: secret } : body;
}
