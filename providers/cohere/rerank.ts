/**
 * Cohere's rerank shape: `{model, query, documents, top_n}` in, `results: [{index, relevance_score}]` out. Jina,
 * Together, SiliconFlow, vLLM and Cohere models on Bedrock speak it too, each with small differences in where
 * usage sits; `cohereShapedRerank` reads all of them.
 */
import type { RerankRequest, RerankResult } from '../../core/canonical/rerank.ts';
import type { ProviderTarget, RerankTranslator, UpstreamRequest } from '../../core/dispatch/provider.ts';
import { malformedAnswer } from '../shared/embeddings.ts';
import { rerankResult } from '../shared/rerank.ts';
import { cohereHeaders } from './request.ts';

/** The request body every Cohere-shaped API takes; `extra` adds a provider's own fields. */
export function cohereShapedBody(request: RerankRequest, target: ProviderTarget, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: target.upstreamModel,
    query: request.query,
    documents: request.documents,
    ...(request.top_n !== undefined ? { top_n: request.top_n } : {}),
    ...extra,
  };
}

interface CohereShapedAnswer {
  results?: unknown;
  /** Voyage names the list `data`. */
  data?: unknown;
  meta?: { billed_units?: { search_units?: unknown; input_tokens?: unknown }; tokens?: { input_tokens?: unknown } };
  usage?: { total_tokens?: unknown };
}

/**
 * Any Cohere-shaped answer -> canonical. Search units come from `meta.billed_units` (Cohere, SiliconFlow);
 * tokens from `usage.total_tokens` (Jina, Together, vLLM, Voyage) or `meta.billed_units.input_tokens`.
 */
export function cohereShapedRerank(body: unknown, target: ProviderTarget, request: RerankRequest): RerankResult {
  const answer = body as CohereShapedAnswer | null;
  const list = answer?.results ?? answer?.data;
  if (!answer || typeof answer !== 'object' || !Array.isArray(list)) throw malformedAnswer(target, 'rerank answer (no results list)');
  const scores = list.map((r) => {
    const item = r as { index?: unknown; relevance_score?: unknown } | null;
    return { index: item?.index, score: item?.relevance_score };
  });
  return rerankResult({
    scores,
    scale: 'probability',
    searchUnits: answer.meta?.billed_units?.search_units,
    tokens: answer.usage?.total_tokens ?? answer.meta?.billed_units?.input_tokens ?? answer.meta?.tokens?.input_tokens,
  }, target, request);
}

/** A JSON POST with the provider's bearer key when one is configured (vLLM may run without). */
export function bearerJsonPost(target: ProviderTarget, path: string, body: Record<string, unknown>): UpstreamRequest {
  const headers: Record<string, string> = { ...target.headers, 'content-type': 'application/json', accept: 'application/json' };
  if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
  return { method: 'POST', path, headers, body: JSON.stringify(body) };
}

export const cohereRerank: RerankTranslator = {
  toUpstream: (request, target) => ({
    method: 'POST', path: '/v2/rerank', headers: cohereHeaders(target, false), body: JSON.stringify(cohereShapedBody(request, target)),
  }),
  fromUpstream: (body, target, request) => cohereShapedRerank(body, target, request),
};
