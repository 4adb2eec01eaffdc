/**
 * /v1/batches (capability `batch`): submit a batch to a provider's batch API, list, fetch and cancel. The record
 * and its first `batch.poll` job are written in one transaction, so a batch the provider took is always polled;
 * polling (batches-poll.ts) moves its status, and settlement (batches-settle.ts) meters it once it ends.
 */
import { cancelBatch, checkBatchEndpoint, submitBatch } from '../dispatch/batches-call.ts';
import { GatewayError, validationError } from '../errors.ts';
import type { LocalEndpoint, LocalEndpointDeps } from '../ingress/endpoint.ts';
import { jsonBodyReader } from '../ingress/body.ts';
import type { GatewayContext, GatewayMiddleware } from '../pipeline/context.ts';
import { batchNotFound, findBatch, insertBatch, isTerminal, listBatches, markCancelRequested, newBatchId } from '../store/batches.ts';
import { pageRequest } from '../store/pagination.ts';
import { newWebhookSecret } from '../webhooks/sign.ts';
import { callerOf } from '../pipeline/recorded-caller.ts';
import { webhookUrl } from './batches-caller.ts';
import { batchObject, batchTarget, pollInterval, pollJob } from './batches-common.ts';
import { registerBatch } from './batches-register.ts';
import { checkLines, MAX_BATCH_LINES, providerLines, submitFields, type ModelResolver } from './batches-request.ts';
import { batchListSchema, batchObjectSchema, batchSubmitSchema, BATCH_BODY_LIMIT } from './batches-schemas.ts';

const ROUTE = '/v1/batches';
const readBody = jsonBodyReader(BATCH_BODY_LIMIT);

const idOf = (ctx: GatewayContext) => (ctx as GatewayContext & { params: { id: string } }).params.id;

/** Routing's answer for the caller, narrowed to the batch's provider: a batch goes to one provider, not a fallback. */
function modelResolver(deps: LocalEndpointDeps, ctx: GatewayContext, provider: string): ModelResolver {
  const policy = ctx.state.gw.caller?.policy;
  return (requested) => {
    const { modelId, route } = deps.routing.resolve(requested, policy);
    const target = route.targets.find((t) => t.slug === provider);
    if (!target) {
      throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `Model "${modelId}" is not served by ${provider}, the batch's provider`, { model: modelId, provider });
    }
    return { modelId, upstreamModel: target.upstreamModel };
  };
}

function submitHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const submit = submitFields(await readBody(ctx));
    const entry = batchTarget(deps, deps.config, deps.providers, submit.provider);
    if (!entry) throw validationError([{ path: '/provider', message: `no provider "${submit.provider}" is configured and enabled` }]);
    if (submit.requests === null) return void (ctx.body = await registerBatch(deps, ctx, entry, submit, submit.providerBatchId!));
    checkBatchEndpoint(entry.provider, submit.endpoint);
    const url = webhookUrl(deps, submit.webhookUrl);
    const caller = callerOf(ctx);
    const checked = checkLines({ ...submit, requests: submit.requests });
    const { lines, model } = await providerLines(deps.db, caller.tenantId, submit.provider, checked, modelResolver(deps, ctx, submit.provider), deps.clock.now());
    const submitted = await submitBatch(deps, entry.provider, entry.target, submit.endpoint, lines, ctx.state.gw.signal);
    const secret = url === null ? null : newWebhookSecret();
    const id = newBatchId();
    const firstPoll = deps.clock.now() + pollInterval(deps.config, entry.provider.family);
    let record;
    try {
      record = await deps.db.transaction(async (tx) => {
        const inserted = await insertBatch(tx, id, {
          ...caller, provider: submit.provider, providerBatchId: submitted.id, endpoint: submit.endpoint, status: 'validating',
          requestCounts: submitted.counts.total > 0 ? submitted.counts : { total: lines.length, completed: 0, failed: 0 },
          metadata: submit.metadata, webhookUrl: url, webhookSecret: secret, requestedModel: checked[0]!.body.model as string, model,
        });
        await deps.jobs.enqueue(pollJob(id, firstPoll), tx);
        return inserted;
      });
    } catch (err) {
      // No record names the provider's batch: it is cancelled, best effort, rather than run unaccounted.
      cancelBatch(deps, entry.provider, entry.target, submitted.id, AbortSignal.timeout(30_000)).catch(() => {});
      throw err;
    }
    ctx.body = { ...batchObject(record), ...(secret === null ? {} : { webhook_secret: secret }) };
  };
}

function listHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const page = pageRequest(ctx.query as Record<string, string | string[] | undefined>);
    ctx.body = await listBatches(deps.db, callerOf(ctx).tenantId, page, batchObject);
  };
}

function fetchHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const batch = await findBatch(deps.db, callerOf(ctx).tenantId, idOf(ctx));
    if (!batch) throw batchNotFound(idOf(ctx));
    ctx.body = batchObject(batch);
  };
}

/** Idempotent: a terminal batch answers as it is; a running one has its provider cancel requested at once. */
function cancelHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const batch = await findBatch(deps.db, callerOf(ctx).tenantId, idOf(ctx));
    if (!batch) throw batchNotFound(idOf(ctx));
    if (isTerminal(batch.status)) return void (ctx.body = batchObject(batch));
    const entry = batchTarget(deps, deps.config, deps.providers, batch.provider);
    if (!entry) throw validationError([{ path: '/provider', message: `the batch's provider "${batch.provider}" is no longer configured` }]);
    await cancelBatch(deps, entry.provider, entry.target, batch.providerBatchId, ctx.state.gw.signal);
    const marked = await markCancelRequested(deps.db, batch.id, deps.clock.now());
    ctx.body = batchObject(marked ?? batch);
  };
}

const base = { kind: 'local', path: ROUTE, capability: 'batch', errorEnvelope: 'canonical' } as const;
const byId = { ...base, routePattern: `${ROUTE}/:id` } as const;

export const batchesEndpoints: readonly LocalEndpoint[] = [
  {
    ...base, method: 'POST',
    summary: 'Submit a batch of requests to a provider\'s batch API, or register one made on the provider for polling.',
    description: `provider (openai or anthropic), endpoint, requests (1 to ${MAX_BATCH_LINES} lines {custom_id, method: POST, url: the endpoint, body}; every problem names its line's custom_id), optionally completion_webhook_url and metadata. input_file_id values in a line's body are gateway file ids, sent as the provider's. The answer is the Batch, status validating, and webhook_secret once when a webhook URL was given. With provider_batch_id instead of requests (openai, anthropic, azure-openai, gemini) the provider's batch is fetched once (404 NOT_FOUND when it has none) and recorded for polling; a provider batch the tenant already has answers its record, without the secret.`,
    bodyLimitBytes: BATCH_BODY_LIMIT,
    requestSchema: batchSubmitSchema,
    responses: { '200': { description: 'The new Batch.', schema: batchObjectSchema } },
    handler: submitHandler,
  },
  {
    ...base, method: 'GET',
    summary: 'The deployment\'s batches, oldest first: query limit (1-100, default 20), cursor.',
    responses: { '200': { description: 'A page of Batch objects.', schema: batchListSchema } },
    handler: listHandler,
  },
  {
    ...byId, method: 'GET',
    summary: 'One batch, as polling last saw it.',
    responses: { '200': { description: 'The Batch.', schema: batchObjectSchema } },
    handler: fetchHandler,
  },
  {
    ...byId, routePattern: `${ROUTE}/:id/cancel`, method: 'POST',
    summary: 'Cancel a batch: a terminal one is returned as it is; for a running one the provider\'s cancel is requested at once and cancel_requested_at set, and polling moves its status.',
    responses: { '200': { description: 'The Batch.', schema: batchObjectSchema } },
    handler: cancelHandler,
  },
];
