/**
 * What every rerank translator does with an answer: scores checked to be one per known document, mapped into
 * 0..1 when the provider returns logits, and search units billed as the provider says or by Cohere's rule.
 */
import { searchUnitsFor, type RerankRequest, type RerankResult, type RerankScore } from '../../core/canonical/rerank.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { malformedAnswer } from './embeddings.ts';

/** The logistic function: a cross-encoder's logit -> a relevance in 0..1, keeping the order. */
export const logistic = (logit: number): number => 1 / (1 + Math.exp(-logit));

/**
 * How a provider scores: `probability` is already 0..1 (a score outside it is a malformed answer, never
 * clamped); `logit` is a raw cross-encoder output, mapped through the logistic function.
 */
export type ScoreScale = 'probability' | 'logit';

export interface RawScore { index: unknown; score: unknown }

export interface RerankAnswer {
  scores: RawScore[];
  scale: ScoreScale;
  /** The provider's own billed search units, when it reports them. */
  searchUnits?: unknown;
  /** Tokens the provider counted, for those that bill rerank by tokens. */
  tokens?: unknown;
}

export function rerankResult(answer: RerankAnswer, target: ProviderTarget, request: RerankRequest): RerankResult {
  const seen = new Set<number>();
  const results: RerankScore[] = answer.scores.map(({ index, score }) => {
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= request.documents.length || seen.has(index)) {
      throw malformedAnswer(target, `rerank answer (document index ${JSON.stringify(index)} is not one of the ${request.documents.length} sent, once)`);
    }
    seen.add(index);
    if (typeof score !== 'number' || !Number.isFinite(score)) throw malformedAnswer(target, 'rerank answer (a score is not a number)');
    if (answer.scale === 'logit') return { index, relevance_score: logistic(score) };
    if (score < 0 || score > 1) throw malformedAnswer(target, `rerank answer (score ${score} is outside 0..1)`);
    return { index, relevance_score: score };
  });
  const reported = answer.searchUnits;
  const searchUnits = typeof reported === 'number' && Number.isInteger(reported) && reported >= 0 ? reported : searchUnitsFor(request.documents.length);
  const result: RerankResult = { object: 'rerank', id: '', results, meta: { billed_units: { search_units: searchUnits } } };
  const tokens = answer.tokens;
  if (typeof tokens === 'number' && Number.isInteger(tokens) && tokens >= 0) result.usage = { prompt_tokens: tokens, completion_tokens: 0, total_tokens: tokens };
  return result;
}

/**
 * A provider that takes fewer documents in one call than the gateway's 10,000: refused before any I/O, naming
 * the cap, rather than cut short.
 */
export function checkDocumentCap(target: ProviderTarget, request: RerankRequest, cap: number): void {
  if (request.documents.length <= cap) return;
  throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${target.slug} reranks at most ${cap} documents per request (got ${request.documents.length})`, {
    provider: target.slug, capability: 'rerank', maxDocuments: cap,
  });
}
