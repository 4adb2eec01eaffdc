/**
 * One rerank call to one provider target. The translator returns scores in any order; the gateway checks them
 * (indexes of the request's documents, each once; scores from 0 to 1), sorts them by relevance (ties by
 * position, so equal scores keep the documents' order), keeps top_n, adds the documents when asked, and sets
 * the id to the request id (X-Request-ID).
 */
import type { CanonicalRerankRequest, RerankRequest, RerankResult, RerankScore } from '../canonical/rerank.ts';
import { estimateRerankTokens } from '../canonical/estimate.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import { badAnswer, exchangeJson, markRouted, unsupported, type CallDeps } from './exchange.ts';
import type { ProviderDefinition, ProviderTarget, RerankTranslator } from './provider.ts';
import { callSignal } from '../pipeline/abort.ts';

export function rerankTranslatorFor(provider: ProviderDefinition): RerankTranslator {
  if (!provider.capabilities.rerank || !provider.rerank) throw unsupported(provider.slug, 'rerank', { capability: 'rerank' });
  return provider.rerank;
}

export function checkRerank(provider: ProviderDefinition): void {
  rerankTranslatorFor(provider);
}

/** The translator's answer, checked, sorted and trimmed; `id` is the request's. */
export function finishRerank(target: ProviderTarget, request: RerankRequest, result: RerankResult, id: string): RerankResult {
  if (!result || !Array.isArray(result.results)) throw badAnswer(target, 'a rerank answer without results');
  const count = request.documents.length;
  const seen = new Set<number>();
  for (const item of result.results) {
    const index = item?.index;
    if (!Number.isInteger(index) || index < 0 || index >= count || seen.has(index)) throw badAnswer(target, 'rerank results whose indexes are not documents of the request, each once');
    seen.add(index);
    const score = item.relevance_score;
    if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1) throw badAnswer(target, `a relevance score outside 0 to 1 (${String(score)})`);
  }
  const units = result.meta?.billed_units?.search_units;
  if (!Number.isInteger(units) || units < 0) throw badAnswer(target, 'billed search units that are not a whole number');
  const ranked = [...result.results].sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
  const results = ranked.slice(0, request.top_n ?? count).map((item): RerankScore => ({
    index: item.index,
    relevance_score: item.relevance_score,
    ...(request.return_documents ? { document: { text: request.documents[item.index]! } } : {}),
  }));
  const finished: RerankResult = { object: 'rerank', id, results, meta: { billed_units: { search_units: units } } };
  if (result.usage) finished.usage = result.usage;
  return finished;
}

export async function callRerank(ctx: GatewayContext, deps: CallDeps, provider: ProviderDefinition, target: ProviderTarget): Promise<void> {
  const gw = ctx.state.gw;
  const request = gw.canonical as CanonicalRerankRequest;
  const translator = rerankTranslatorFor(provider);
  const body = await exchangeJson(deps, provider, target, translator.toUpstream(request.body, target), callSignal(gw));
  const result = finishRerank(target, request.body, translator.fromUpstream(body, target, request.body), gw.requestId);
  markRouted(ctx, target, request.model);
  if (!result.usage) {
    const tokens = await estimateRerankTokens(request.body);
    result.usage = { prompt_tokens: tokens, completion_tokens: 0, total_tokens: tokens };
    gw.usageEstimated = true;
  }
  gw.result = result;
}
