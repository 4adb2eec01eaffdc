/**
 * Rerank on Bedrock through InvokeModel (POST /model/{id}/invoke), signed by the provider's authorize as chat
 * is. Cohere Rerank (cohere.rerank-v3-5:0) takes Cohere's body plus `api_version: 2`; Amazon Rerank
 * (amazon.rerank-v1:0) the same body without it. Both answer `results[{index, relevance_score}]` in 0..1 and
 * take at most 1,000 documents a call. Bedrock bills rerank per query (up to 100 documents), which is Cohere's
 * search unit; the answer reports none, so the gateway counts them by that rule.
 */
import type { ProviderTarget, RerankTranslator } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { cohereShapedBody, cohereShapedRerank } from '../cohere/rerank.ts';
import { checkDocumentCap } from '../shared/rerank.ts';
import { invokeModel } from './embeddings.ts';

const MAX_DOCUMENTS = 1000;

/** The reranker behind a model id, an inference profile or an ARN ending in one. */
function rerankFamily(target: ProviderTarget): 'cohere' | 'amazon' {
  const id = target.upstreamModel.split('/').at(-1)!;
  if (/(?:^|\.)cohere\.rerank-/.test(id)) return 'cohere';
  if (/(?:^|\.)amazon\.rerank-/.test(id)) return 'amazon';
  throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${target.slug} does not support rerank with ${target.upstreamModel} (Cohere Rerank and Amazon Rerank models do)`, {
    provider: target.slug, capability: 'rerank',
  });
}

export const bedrockRerank: RerankTranslator = {
  toUpstream(request, target) {
    const family = rerankFamily(target);
    checkDocumentCap(target, request, MAX_DOCUMENTS);
    // The model is in the path, not the body.
    const { model: _model, ...body } = cohereShapedBody(request, target, family === 'cohere' ? { api_version: 2 } : {});
    return invokeModel(target, body);
  },
  fromUpstream: (body, target, request) => cohereShapedRerank(body, target, request),
};
