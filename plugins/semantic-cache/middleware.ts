/**
 * One pipeline entry's cache. Before the dispatcher: an exact lookup (one hash, one KV get), then, on a miss and
 * when the entry is semantic, the conversation's embedding and the nearest stored one of the same tenant and
 * partition. A hit answers (gw.result, or gw.stream replayed) and still calls next(): the dispatcher returns at
 * once for an answered request, and the plugins listed after the cache (usage) see it. A miss registers a response
 * stage that stores the answer once it is complete, after it is sent. A failing store or embedding provider is a
 * miss, never a failed request.
 */
import type { CanonicalChatRequest, ChatCompletion } from '../../core/canonical/chat.ts';
import { isServedNatively, markServedNatively } from '../../core/canonical/completion.ts';
import { overriddenModel } from '../../core/identity/policy.ts';
import type { Caller, GatewayContext, GatewayMiddleware, GatewayState } from '../../core/pipeline/context.ts';
import type { Next } from 'koa';
import { AnswerAssembler, replayStream, storable } from './answer.ts';
import { isSemantic, type SemanticCacheConfig } from './config.ts';
import { conversationText, endpointKind, exactKey, partitionKey, uncacheable, type KeyInput } from './key.ts';
import type { CacheShared } from './shared.ts';
import { normalized, type StoredEntry } from './stores.ts';

/** The request's Cache-Control directives that concern the cache. */
export function cacheControl(header: string): { noStore: boolean; noCache: boolean } {
  const directives = header.toLowerCase().split(',').map((d) => d.split('=')[0]!.trim());
  return { noStore: directives.includes('no-store'), noCache: directives.includes('no-cache') };
}

type Served = NonNullable<GatewayState['servedFromCache']>;

/** What a miss needs to store its answer later. */
interface Miss {
  request: CanonicalChatRequest;
  caller: Caller | undefined;
  tenant: string;
  exact: string;
  /**
   * The partition and the conversation to embed, null when the entry is not semantic or the conversation is not
   * compared by meaning. Taken before the dispatcher runs: it may rewrite the request (a gateway tool).
   */
  semantic: { partition: string; text: string } | null;
  /** The embedding made for the lookup; undefined when none was tried, null when it failed. */
  vector: number[] | null | undefined;
}

export function cacheMiddleware(config: SemanticCacheConfig, shared: CacheShared): GatewayMiddleware {
  const semantic = isSemantic(config) ? shared.semantic : null;
  const ttlMs = config.ttlSeconds * 1000;

  const embed = async (text: string, caller: Caller | undefined, signal?: AbortSignal): Promise<number[] | null> => {
    const timeout = AbortSignal.timeout(config.embeddingTimeoutMs);
    try {
      const { vectors } = await shared.services.embeddings.embed({
        model: config.embeddingModel!, input: [text], caller, applyPolicy: false, purpose: 'semantic-cache',
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      return normalized(vectors[0] ?? []);
    } catch (err) {
      if (!signal?.aborted) shared.embeddingFailed(config.embeddingModel!, err);
      return null;
    }
  };

  const serve = async (ctx: GatewayContext, next: Next, request: CanonicalChatRequest, entry: StoredEntry, served: Served) => {
    const gw = ctx.state.gw;
    gw.servedFromCache = served;
    ctx.set('X-Cache', served.kind === 'exact' ? 'hit' : 'semantic-hit');
    ctx.set('X-Cache-Similarity', served.kind === 'exact' ? '1' : Math.min(served.similarity, 1).toFixed(4));
    // A native completions API's text already holds the echo: the endpoint must not add it again.
    if (entry.native) markServedNatively(request);
    if (request.stream) gw.stream = replayStream(entry.answer);
    else gw.result = entry.answer;
    await next();
  };

  const write = async (miss: Miss, answer: ChatCompletion) => {
    const entry: StoredEntry = { v: 1, tenant: miss.tenant, native: isServedNatively(miss.request), expiresAt: shared.services.clock.now() + ttlMs, answer };
    const json = JSON.stringify(entry);
    if (Buffer.byteLength(json) > config.maxEntryBytes) return;
    await shared.quietly('store', () => shared.exact.set(miss.exact, entry, json));
    if (!semantic || !miss.semantic || miss.vector === null) return;
    // A request that skipped the lookup (no-cache) is embedded now; one whose embedding failed is not tried again.
    const { partition, text } = miss.semantic;
    const vector = miss.vector ?? await embed(text, miss.caller);
    if (!vector) return;
    const stored = await shared.quietly('store', async () => {
      await semantic.put(miss.exact, partition, vector, entry, json);
      return true;
    });
    if (stored) shared.pruneSometimes();
  };

  /** Stores the answer once it is complete, if it may be stored: a result as it leaves, a stream once completed. */
  const storeWhenAnswered = (gw: GatewayState, miss: Miss) => {
    const keep = (answer: ChatCompletion | null) => {
      if (answer && storable(answer, config.cacheToolCalls)) shared.track(write(miss, answer));
    };
    if (!miss.request.stream) {
      gw.stage({ result: (result) => keep(result.object === 'chat.completion' ? result : null) });
      return;
    }
    const assembler = new AnswerAssembler(config.maxEntryBytes);
    gw.stage({
      chunk: (chunk) => void assembler.push(chunk),
      complete: (outcome) => keep(outcome.status === 'completed' ? assembler.answer() : null),
    });
  };

  return async (ctx, next) => {
    const gw = ctx.state.gw;
    const kind = gw.endpoint.kind === 'dispatch' ? endpointKind(gw.endpoint.path) : undefined;
    if (!kind) return next();
    const request = await gw.request();
    // A Responses request continues stored state: it is never answered from, nor stored in, the cache.
    if (request.modality !== 'chat' || request.native) return next();
    ctx.set('X-Cache', 'miss');
    const { noStore, noCache } = cacheControl(ctx.get('cache-control'));
    if (noStore || uncacheable(request)) return next();

    const caller = gw.caller;
    const tenant = caller?.tenantId ?? 'default';
    const model = caller ? overriddenModel(caller.policy, request.model) : request.model;
    const key: KeyInput = { tenant, kind, model, request, embeddingModel: semantic ? config.embeddingModel! : null };
    const exactHash = exactKey(key);
    // The hit path: one hash, one KV get.
    const exact = noCache ? null : await shared.quietly('get', () => shared.exact.get(exactHash, tenant));
    if (exact) return serve(ctx, next, request, exact, { kind: 'exact', similarity: 1 });

    const text = semantic ? conversationText(request.body.messages) : null;
    const miss: Miss = { request, caller, tenant, exact: exactHash, semantic: text === null ? null : { partition: partitionKey(key), text }, vector: undefined };
    if (semantic && miss.semantic && !noCache) {
      const { partition } = miss.semantic;
      const vector = await embed(miss.semantic.text, caller, gw.signal);
      miss.vector = vector;
      const match = vector ? await shared.quietly('lookup', () => semantic.nearest(tenant, partition, vector, config.maxScanRows)) : null;
      if (match && match.similarity >= config.threshold) return serve(ctx, next, request, match.entry, { kind: 'semantic', similarity: match.similarity });
    }
    storeWhenAnswered(gw, miss);
    await next();
  };
}
