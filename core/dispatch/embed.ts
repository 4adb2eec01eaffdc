/**
 * The gateway's own embeddings (core/pipeline/embed.ts): a canonical embeddings request run through the
 * dispatcher, the same routing, retries and breakers as /v1/embeddings, outside any client request. The call is
 * then reported as metered work in the name of the caller it serves; it resolves only once usage (and budgets,
 * which take metered work too) hold it, so no embedding goes unrecorded.
 */
import { randomUUID } from 'node:crypto';
import type { CanonicalEmbeddingsRequest, EmbeddingsResult } from '../canonical/embeddings.ts';
import { GatewayError } from '../errors.ts';
import { UNRESTRICTED } from '../identity/policy.ts';
import type { Embedded, EmbeddingService, EmbedRequest } from '../pipeline/embed.ts';
import { MAX_EMBED_INPUTS } from '../pipeline/embed.ts';
import type { GatewayContext, GatewayMiddleware, GatewayState } from '../pipeline/context.ts';
import type { MeteredWork } from '../pipeline/metered.ts';
import type { RoutingTable } from './routing.ts';
import { newObservation } from '../observability/observed.ts';

export interface EmbeddingServiceDeps {
  dispatcher: GatewayMiddleware;
  routing: RoutingTable;
  meterWork: (work: MeteredWork) => Promise<void>;
  now: () => number;
}

/** For models the operator chose: every configured model, no override. */
const OPERATOR_POLICY = UNRESTRICTED;

/** The part of a request's state the dispatcher reads and writes for an embeddings call. */
function embedState(request: CanonicalEmbeddingsRequest, embed: EmbedRequest, signal: AbortSignal): GatewayState {
  // The dispatcher reads the caller's policy (and, for chat only, its tenant).
  const policy = embed.applyPolicy ? embed.caller?.policy ?? OPERATOR_POLICY : OPERATOR_POLICY;
  const caller = { ...embed.caller, policy } as GatewayState['caller'];
  const state: Partial<GatewayState> = {
    requestId: randomUUID(),
    signal,
    abort: () => {},
    caller,
    canonical: request,
    request: async () => request,
    stage: () => { throw new Error('the gateway\'s own embeddings have no response stages'); },
    observed: newObservation(0),
  };
  return state as GatewayState;
}

const floats = (vector: unknown): number[] => {
  if (!Array.isArray(vector)) throw new Error('the dispatcher answered an embedding that is not floats');
  return vector as number[];
};

/** Metered work is idempotent per id: a store that failed a moment ago is asked again before the call fails. */
async function reported(meterWork: EmbeddingServiceDeps['meterWork'], work: MeteredWork): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await meterWork(work);
    } catch (err) {
      if (attempt >= 2) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200 * (attempt + 1)));
    }
  }
}

export function createEmbeddingService(deps: EmbeddingServiceDeps): EmbeddingService {
  return {
    async embed(embed: EmbedRequest): Promise<Embedded> {
      if (embed.input.length === 0) throw new GatewayError('VALIDATION_ERROR', 'Nothing to embed', [{ path: '/input', message: 'at least one text' }]);
      if (embed.input.length > MAX_EMBED_INPUTS) throw new Error(`at most ${MAX_EMBED_INPUTS} texts per embed call (${embed.input.length} given)`);
      // The caller's policy decides the configured model (an override may move it); 404 / 403 as for /v1/embeddings.
      const { modelId } = deps.routing.resolve(embed.model, embed.applyPolicy ? embed.caller?.policy ?? OPERATOR_POLICY : OPERATOR_POLICY);
      const request: CanonicalEmbeddingsRequest = {
        modality: 'embeddings', model: embed.model, stream: false,
        body: { model: embed.model, input: [...embed.input], encoding_format: 'float' },
      };
      const startedAt = deps.now();
      const state = embedState(request, embed, embed.signal ?? AbortSignal.timeout(120_000));
      const ctx = { state: { gw: state, requestId: state.requestId }, set: () => {} } as unknown as GatewayContext;
      await deps.dispatcher(ctx, async () => {});
      const result = state.result as EmbeddingsResult | undefined;
      const target = state.target;
      if (!result || !target) throw new Error('the dispatcher answered no embeddings');
      const promptTokens = result.usage?.prompt_tokens ?? 0;
      const caller = embed.caller;
      await reported(deps.meterWork, {
        id: `embed-${state.requestId}`,
        source: embed.purpose,
        tenantId: caller?.tenantId ?? 'default',
        organizationId: caller?.organizationId ?? null,
        departmentId: caller?.departmentId ?? null,
        callerKind: caller?.kind ?? 'api_key',
        apiKeyId: caller?.kind === 'api_key' ? caller.id : null,
        userId: caller?.kind === 'jwt' ? caller.id : null,
        endpoint: '/v1/embeddings',
        modality: 'embeddings',
        provider: target.provider,
        requestedModel: embed.model,
        model: modelId,
        upstreamModel: target.upstreamModel,
        usage: { prompt_tokens: promptTokens, completion_tokens: 0, total_tokens: result.usage?.total_tokens ?? promptTokens },
        requests: { total: 1, completed: 1, failed: 0 },
        status: 'completed',
        startedAt,
        endedAt: deps.now(),
      });
      return {
        vectors: result.data.map((item) => floats(item.embedding)),
        model: modelId, provider: target.provider, upstreamModel: target.upstreamModel, promptTokens,
      };
    },
  };
}
