/**
 * The last step of every dispatch pipeline, whatever the modality: the canonical request goes to the model's
 * targets in routing order. Targets whose provider cannot serve the request (the modality, or what the request
 * asks of it) are skipped before any I/O; when none can, the first refusal is the answer (400
 * CAPABILITY_NOT_SUPPORTED). A retryable failure before any byte reached the caller is retried on the same
 * target (jittered exponential backoff, routing.retries times), then moves on to the next target; an open
 * breaker moves on at once. A chat request's gateway file ids are resolved for each target's provider just before
 * its first call (chat-files.ts): a file on another provider skips that target like a refusal. A Responses request
 * with a native body goes to the native Responses API of a target's provider that has one (responses-call.ts).
 */
import type { CanonicalRequest, ChatCompletionRequest } from '../canonical/chat.ts';
import type { RoutingConfig } from '../config/types.ts';
import { GatewayError } from '../errors.ts';
import type { Caller, GatewayContext, GatewayMiddleware, GatewayState } from '../pipeline/context.ts';
import type { TracedState } from '../observability/tracing-types.ts';
import { callChat, checkChat } from './chat-call.ts';
import { providerFileIds } from './chat-files.ts';
import { callCompletion, checkCompletion } from './completion-call.ts';
import { callEmbeddings, checkEmbeddings } from './embeddings-call.ts';
import { sleep, type CallDeps } from './exchange.ts';
import type { BuiltInToolName, ProviderDefinition, ProviderTarget } from './provider.ts';
import { callRerank, checkRerank } from './rerank-call.ts';
import { callImage, checkImage } from './image-call.ts';
import type { ProgressReport } from './image-progress.ts';
import { callSpeech, checkSpeech } from './speech-call.ts';
import { callTranscription, checkTranscription } from './transcription-call.ts';
import { callVideo, checkVideo } from './video-call.ts';
import { callResponses, responsesTranslatorFor } from './responses-call.ts';
import type { ProviderRegistry } from './provider-registry.ts';
import type { RoutingTable } from './routing.ts';
import type { Queryable } from '../store/database.ts';
import { isPoolFull, isRetryable, shouldFallBack } from './upstream-errors.ts';
import { callSignal } from '../pipeline/abort.ts';

/**
 * A built-in tool the gateway itself handles for every provider (file_search, with the vector stores): it
 * rewrites the request (injecting context, removing the tool) before the provider sees it.
 */
export type GatewayToolHandler = (request: ChatCompletionRequest, gw: GatewayState) => Promise<ChatCompletionRequest>;

export interface DispatcherDeps extends CallDeps {
  routing: RoutingTable;
  providers: ProviderRegistry;
  retry: RoutingConfig;
  gatewayTools: ReadonlyMap<BuiltInToolName, GatewayToolHandler>;
  /** The file registry, where chat file parts' gateway ids are resolved (chat-files.ts). */
  db: Queryable;
  now: () => number;
  /** Where image calls report the progress of polled providers (the /image-progress namespace). */
  imageProgress?: ProgressReport;
  /** Math.random by default; tests pin the jitter. */
  random?: () => number;
}

/** The spec's built-ins the gateway answers itself rather than mapping to a provider's native tool. */
const GATEWAY_TOOLS: readonly BuiltInToolName[] = ['file_search'];

const namesGatewayTool = (request: ChatCompletionRequest): boolean =>
  request.tools !== undefined && request.tools.some((t) => t.type === 'built_in' && GATEWAY_TOOLS.includes(t.built_in));

async function applyGatewayTools(deps: DispatcherDeps, request: ChatCompletionRequest, gw: GatewayState): Promise<ChatCompletionRequest> {
  let current = request;
  for (const name of GATEWAY_TOOLS) {
    if (!current.tools?.some((t) => t.type === 'built_in' && t.built_in === name)) continue;
    const handler = deps.gatewayTools.get(name);
    if (!handler) throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `The built-in tool ${name} needs the gateway's vector stores, which this gateway does not serve`, { tools: [name] });
    current = await handler(current, gw);
  }
  return current;
}

const originOf = (baseUrl: string) => new URL(baseUrl).origin;

/** Per modality: whether a target can serve the request (throws CAPABILITY_NOT_SUPPORTED; no I/O), and the call. */
interface ModalityCall {
  check(provider: ProviderDefinition, target: ProviderTarget, request: CanonicalRequest): void;
  call(ctx: GatewayContext, deps: CallDeps, provider: ProviderDefinition, target: ProviderTarget): Promise<void>;
}

function modalityCall(deps: DispatcherDeps, request: CanonicalRequest, caller: Caller | undefined): ModalityCall {
  switch (request.modality) {
    case 'chat': {
      // A legacy completion is chat on the wire unless a target serves it natively (completion-call.ts).
      if (request.legacy) return { check: (p, t) => checkCompletion(p, t, request), call: callCompletion };
      // Tenant as for /v1/files: a deployment without auth is the one tenant `default`.
      const forProvider = providerFileIds(deps.db, caller?.tenantId ?? 'default', request.body, deps.now);
      const chat: ModalityCall = { check: (p, t) => checkChat(p, t, request), call: async (ctx, d, p, t) => callChat(ctx, d, p, t, await forProvider(t.slug)) };
      if (!request.native) return chat;
      // A Responses request goes to a native Responses API where the target's provider has one (responses-call.ts).
      return {
        check: (p, t) => { if (!responsesTranslatorFor(p, t, request)) chat.check(p, t, request); },
        call: (ctx, d, p, t) => {
          const native = responsesTranslatorFor(p, t, request);
          return native ? callResponses(ctx, d, p, t, native) : chat.call(ctx, d, p, t);
        },
      };
    }
    case 'embeddings': return { check: (p, t) => checkEmbeddings(p, t, request), call: callEmbeddings };
    case 'rerank': return { check: (p) => checkRerank(p), call: callRerank };
    case 'transcription': case 'translation': return { check: (p) => checkTranscription(p, request), call: callTranscription };
    case 'speech': return { check: (p) => checkSpeech(p), call: callSpeech };
    case 'image': return { check: (p) => checkImage(p), call: (ctx, d, p, t) => callImage(ctx, { ...d, ...(deps.imageProgress ? { imageProgress: deps.imageProgress } : {}) }, p, t) };
    case 'video': return { check: (p) => checkVideo(p), call: (ctx, d, p, t) => callVideo(ctx, { ...d, db: deps.db, now: deps.now, routing: deps.routing }, p, t) };
  }
}

const isRefusal = (err: unknown): err is GatewayError => err instanceof GatewayError && err.code === 'CAPABILITY_NOT_SUPPORTED';
/** A target that cannot serve this request, though another might: a refusal, or a file on another provider. */
const isTargetRefusal = (err: unknown): err is GatewayError => isRefusal(err) || (err instanceof GatewayError && err.code === 'FILE_PROVIDER_MISMATCH');

/** The targets that can serve the request, in order; none: the first target's refusal. */
function servingTargets(deps: DispatcherDeps, modality: ModalityCall, targets: ProviderTarget[], request: CanonicalRequest): ProviderTarget[] {
  let firstRefusal: GatewayError | undefined;
  const serving = targets.filter((target) => {
    try {
      modality.check(deps.providers.get(target.slug)!, target, request);
      return true;
    } catch (err) {
      if (!isRefusal(err)) throw err;
      firstRefusal ??= err;
      return false;
    }
  });
  if (serving.length === 0) throw firstRefusal!;
  return serving;
}

/** The targets of a request pinned to one provider: that provider's, or 400 when the model has none there. */
function pinned(resolved: { modelId: string; targets: ProviderTarget[] }, request: CanonicalRequest): { targets: ProviderTarget[] } {
  const provider = request.modality === 'chat' ? request.provider : undefined;
  if (provider === undefined) return resolved;
  const targets = resolved.targets.filter((target) => target.slug === provider);
  if (targets.length === 0) {
    throw new GatewayError('VALIDATION_ERROR', `Model "${resolved.modelId}" is not served by provider "${provider}" (its routing names no target there)`,
      [{ path: '/provider', message: `provider "${provider}" does not serve model "${resolved.modelId}"` }]);
  }
  return { targets };
}

export function createDispatcher(deps: DispatcherDeps): GatewayMiddleware {
  const random = deps.random ?? Math.random;
  const backoff = (attempt: number) => random() * Math.min(deps.retry.maxBackoffMs, deps.retry.backoffMs * 2 ** attempt);
  return async (ctx) => {
    const gw = ctx.state.gw;
    if (gw.result || gw.stream) return; // answered early by a plugin
    // Read already by a plugin (ratelimit, budget), most often: no await then.
    const request = gw.canonical ?? await gw.request();
    const { targets } = pinned(deps.routing.resolve(request.model, gw.caller?.policy), request);
    if (request.modality === 'chat' && namesGatewayTool(request.body)) request.body = await applyGatewayTools(deps, request.body, gw);
    const modality = modalityCall(deps, request, gw.caller);
    let lastError: unknown;
    // A refusal only a translator could make (a parameter this provider lacks): the next target may serve it.
    // A file on another provider than this target's: the next target may be on the file's provider.
    let refusal: GatewayError | undefined;
    // Origins whose pool just refused this request: another target on one would only queue behind it again.
    const fullOrigins = new Set<string>();
    const serving = servingTargets(deps, modality, targets, request);
    // Upstream time, for the overhead metric: from the first call until the answer is in hand (a stream's end is
    // noted by chat-stream.ts), backoffs and fallbacks included.
    const observed = gw.observed;
    const signal = callSignal(gw);
    observed.upstreamStart = performance.now();
    try {
      for (const target of serving) {
        if (fullOrigins.size > 0 && fullOrigins.has(originOf(target.baseUrl))) continue;
        const provider = deps.providers.get(target.slug)!;
        for (let attempt = 0; attempt <= deps.retry.retries; attempt++) {
          // An abort ends the backoff early; the check below answers it.
          if (attempt > 0) await sleep(backoff(attempt - 1), gw.signal).catch(() => undefined);
          if (signal.aborted) throw lastError ?? signal.reason;
          try {
            const trace = (ctx.state as TracedState).trace;
            if (trace) await trace.upstreamAttempt(gw, request, target, () => modality.call(ctx, deps, provider, target));
            else await modality.call(ctx, deps, provider, target);
            return;
          } catch (err) {
            if (isTargetRefusal(err) && !signal.aborted) {
              refusal ??= err;
              break;
            }
            if (signal.aborted || !shouldFallBack(err)) throw err;
            lastError = err;
            if (isPoolFull(err)) fullOrigins.add(originOf(target.baseUrl));
            if (!isRetryable(err)) break; // an open breaker or a refused credential: only another target can help
          }
        }
      }
      throw lastError ?? refusal;
    } finally {
      if (gw.stream) observed.firstTokenMs = performance.now() - observed.upstreamStart;
      else observed.upstreamEnd = performance.now();
    }
  };
}
