/**
 * watsonx.ai embeddings (/text/embeddings) and rerank (/text/rerank), in the project or space chat uses and with
 * the same IAM token (authorize). Without truncate_input_tokens an over-long input is an error, as on OpenAI.
 * Rerank scores are the cross-encoder's raw logits (ms-marco-MiniLM answers 2.9 and -0.9), mapped into 0..1 by
 * the logistic function; watsonx reports tokens, not search units, so those follow Cohere's rule.
 */
import { embeddingInputs } from '../../core/canonical/embeddings.ts';
import type { EmbeddingsTranslator, ProviderTarget, RerankTranslator, UpstreamRequest } from '../../core/dispatch/provider.ts';
import { embeddingsResult, malformedAnswer } from '../shared/embeddings.ts';
import { rerankResult } from '../shared/rerank.ts';
import { DEFAULT_VERSION } from './chat.ts';
import type { WatsonxOptions } from './request.ts';

function post(target: ProviderTarget, what: 'embeddings' | 'rerank', fields: Record<string, unknown>): UpstreamRequest {
  const options = target.options as WatsonxOptions;
  const body: Record<string, unknown> = { model_id: target.upstreamModel, ...fields };
  if (options.projectId) body.project_id = options.projectId;
  else if (options.spaceId) body.space_id = options.spaceId;
  return {
    method: 'POST',
    path: `/text/${what}?version=${encodeURIComponent(options.version ?? DEFAULT_VERSION)}`,
    headers: { ...target.headers, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  };
}

export const watsonxEmbeddings: EmbeddingsTranslator = {
  toUpstream: (request, target) => post(target, 'embeddings', {
    inputs: embeddingInputs(request),
    parameters: { return_options: { input_text: false } },
  }),
  fromUpstream(body, target, request) {
    const answer = body as { results?: unknown; input_token_count?: unknown } | null;
    if (!answer || typeof answer !== 'object' || !Array.isArray(answer.results)) throw malformedAnswer(target, 'embeddings answer (no results)');
    const vectors = answer.results.map((r) => (r as { embedding?: unknown } | null)?.embedding);
    return embeddingsResult(vectors, target, request, answer.input_token_count);
  },
  // The watsonx embedding models (slate, granite-embedding, e5, minilm) have one size each.
  supportsDimensions: () => false,
};

export const watsonxRerank: RerankTranslator = {
  toUpstream: (request, target) => post(target, 'rerank', {
    query: request.query,
    inputs: request.documents.map((text) => ({ text })),
    parameters: { return_options: { inputs: false, query: false, ...(request.top_n !== undefined ? { top_n: request.top_n } : {}) } },
  }),
  fromUpstream(body, target, request) {
    const answer = body as { results?: unknown; input_token_count?: unknown } | null;
    if (!answer || typeof answer !== 'object' || !Array.isArray(answer.results)) throw malformedAnswer(target, 'rerank answer (no results)');
    const scores = answer.results.map((r) => {
      const item = r as { index?: unknown; score?: unknown } | null;
      return { index: item?.index, score: item?.score };
    });
    return rerankResult({ scores, scale: 'logit', tokens: answer.input_token_count }, target, request);
  },
};
