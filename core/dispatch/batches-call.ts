/**
 * The I/O of a provider's batch API (the `batches` translator, core/dispatch/provider-batches.ts): submit (the
 * input JSONL uploaded through the provider's files translator first, where the plan says so), status, cancel,
 * a result file's metadata, and the result lines, read one at a time as they stream in. Every request runs in
 * the upstream's breaker, as the dispatcher's do.
 */
import { decodeNdjson } from '../streaming/ndjson.ts';
import { badAnswer, exchange, exchangeJson, unsupported, type CallDeps } from './exchange.ts';
import { deleteProviderFile, Sender, uploadFile } from './files-call.ts';
import type { BatchEndpoint, BatchesTranslator, BatchLine, ProviderBatch } from './provider-batches.ts';
import type { ProviderDefinition, ProviderTarget, UpstreamRequest } from './provider.ts';

/** The provider's batches translator, or 400 CAPABILITY_NOT_SUPPORTED before any I/O. */
export function batchesTranslatorFor(provider: ProviderDefinition, submitting: boolean): BatchesTranslator {
  const batch = provider.capabilities.batch;
  if (!batch || !provider.batches) {
    throw unsupported(provider.slug, 'batches (it has no batch API the gateway submits to or polls)', { capability: 'batch' });
  }
  if (submitting && (!batch.submit || !provider.batches.submit)) {
    throw unsupported(provider.slug, 'batch submission (the gateway polls its batches only: register one by provider_batch_id)', { capability: 'batch' });
  }
  return provider.batches;
}

/** The endpoint is one this provider's batch API takes, or 400 CAPABILITY_NOT_SUPPORTED. */
export function checkBatchEndpoint(provider: ProviderDefinition, endpoint: BatchEndpoint, submitting = true): void {
  const translator = batchesTranslatorFor(provider, submitting);
  if (!translator.endpoints.includes(endpoint)) {
    throw unsupported(provider.slug, `batches of ${endpoint} (it takes ${translator.endpoints.join(', ')})`, { capability: 'batch', endpoint });
  }
}

async function* once(bytes: Buffer): AsyncGenerator<Buffer> {
  yield bytes;
}

/** Submits the lines; the answer is the provider's new batch. */
export async function submitBatch(
  deps: CallDeps, provider: ProviderDefinition, target: ProviderTarget, endpoint: BatchEndpoint, lines: readonly BatchLine[], signal: AbortSignal,
): Promise<ProviderBatch> {
  const translator = batchesTranslatorFor(provider, true);
  const plan = translator.submit!(endpoint, lines, target);
  if (plan.kind === 'direct') return translator.fromBatch(await exchangeJson(deps, provider, target, plan.request, signal), target);
  const bytes = Buffer.from(plan.jsonl, 'utf8');
  const input = await uploadFile(deps, provider, target, { filename: plan.filename, mimeType: 'application/jsonl', purpose: 'batch', bytes: bytes.length },
    { bytes: once(bytes), callerFault: () => undefined }, signal);
  try {
    return translator.fromBatch(await exchangeJson(deps, provider, target, plan.create(input.id), signal), target);
  } catch (err) {
    // No batch names the input file: it goes, best effort (a failure leaves it to the provider's retention).
    deleteProviderFile(deps, provider, target, input.id, AbortSignal.timeout(30_000)).catch(() => {});
    throw err;
  }
}

export async function batchStatus(deps: CallDeps, provider: ProviderDefinition, target: ProviderTarget, providerBatchId: string, signal: AbortSignal): Promise<ProviderBatch> {
  const translator = batchesTranslatorFor(provider, false);
  return translator.fromBatch(await exchangeJson(deps, provider, target, translator.status(providerBatchId, target), signal), target);
}

/** Requests the cancel; polling reads what became of the batch. */
export async function cancelBatch(deps: CallDeps, provider: ProviderDefinition, target: ProviderTarget, providerBatchId: string, signal: AbortSignal): Promise<void> {
  const translator = batchesTranslatorFor(provider, false);
  // The answer is not read: Bedrock's stop answers an empty body, others the batch (which polling reads anyway).
  const answer = await exchange(deps, provider, target, translator.cancel(providerBatchId, target), { stream: true }, signal);
  if ('stream' in answer) await answer.stream.body.dump();
}

/**
 * A terminal batch completed from the provider's storage (the translator's `locateResults`), or as it was for a
 * provider whose status names its results itself.
 */
export async function locateBatchResults(
  deps: CallDeps, provider: ProviderDefinition, target: ProviderTarget, batch: ProviderBatch, signal: AbortSignal,
): Promise<ProviderBatch> {
  const translator = batchesTranslatorFor(provider, false);
  if (!translator.locateResults) return batch;
  const sender = new Sender(deps, provider, target, signal);
  const text = (request: UpstreamRequest) => deps.breakers.run(target.slug, target.baseUrl, async () => {
    const response = await sender.send(request, undefined, [404]);
    if (response.statusCode !== 404) return (await sender.answer(response)).text;
    await response.body.dump();
    return null;
  });
  return translator.locateResults(batch, target, { text });
}

/** A result file's size and name, for its registry entry; null for a provider whose results are no file. */
export async function resultFileInfo(
  deps: CallDeps, provider: ProviderDefinition, target: ProviderTarget, batch: ProviderBatch, providerFileId: string, signal: AbortSignal,
): Promise<{ bytes: number; filename: string } | null> {
  const translator = batchesTranslatorFor(provider, false);
  const known = batch.fileInfo && Object.hasOwn(batch.fileInfo, providerFileId) ? batch.fileInfo[providerFileId] : undefined;
  if (known) return known;
  if (!translator.fileInfo || !translator.fromFileInfo) return null;
  return translator.fromFileInfo(await exchangeJson(deps, provider, target, translator.fileInfo(providerFileId, target), signal), target);
}

/** The finished batch's result lines, parsed, as they stream in; nothing when it has no results. */
export async function* resultLines(
  deps: CallDeps, provider: ProviderDefinition, target: ProviderTarget, batch: ProviderBatch, signal: AbortSignal,
): AsyncGenerator<unknown> {
  const translator = batchesTranslatorFor(provider, false);
  const requests = translator.results(batch, target);
  if (!requests) return;
  if (batch.inlineResults && translator.inlineResultLines) {
    // One JSON document, already bounded by the upstream's body limit: its lines are in memory anyway.
    for (const request of Array.isArray(requests) ? requests as readonly UpstreamRequest[] : [requests as UpstreamRequest]) {
      yield* translator.inlineResultLines(await exchangeJson(deps, provider, target, request, signal));
    }
    return;
  }
  for (const request of Array.isArray(requests) ? requests as readonly UpstreamRequest[] : [requests as UpstreamRequest]) {
    const answer = await exchange(deps, provider, target, request, { stream: true }, signal);
    if (!('stream' in answer)) throw new Error('a streamed exchange returned a body');
    for await (const event of decodeNdjson(answer.stream.body, deps.upstream.maxFrameBytes)) {
      let line: unknown;
      try {
        line = JSON.parse(event.data);
      } catch {
        answer.stream.body.destroy();
        throw badAnswer(target, 'a batch result line that is not JSON');
      }
      yield line;
    }
  }
}
