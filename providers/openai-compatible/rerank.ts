/**
 * Rerank on the OpenAI-compatible hosts that have it. There is no OpenAI rerank API: Together, SiliconFlow and
 * vLLM copy Cohere's (`/rerank`, `results[{index, relevance_score}]`, scores in 0..1); a NVIDIA NIM serves
 * NVIDIA's own ranking API (`/ranking` with `{query: {text}, passages: [{text}]}`, answered `rankings[{index,
 * logit}]`), whose raw logits are mapped into 0..1 by the logistic function. A catalogue entry names which.
 */
import type { RerankTranslator } from '../../core/dispatch/provider.ts';
import { bearerJsonPost, cohereShapedBody, cohereShapedRerank } from '../cohere/rerank.ts';
import { malformedAnswer } from '../shared/embeddings.ts';
import { rerankResult } from '../shared/rerank.ts';

export type CompatibleRerank =
  /** Cohere's shape at `path`; `returnDocuments: false` is sent where the server would otherwise echo them. */
  | { shape: 'cohere'; path: string; returnDocuments?: false }
  /** NVIDIA's ranking API at `path`; it has no top_n, so the gateway trims. */
  | { shape: 'nvidia-ranking'; path: string };

export function compatibleRerank(spec: CompatibleRerank): RerankTranslator {
  if (spec.shape === 'cohere') {
    const extra = spec.returnDocuments === false ? { return_documents: false } : {};
    return {
      toUpstream: (request, target) => bearerJsonPost(target, spec.path, cohereShapedBody(request, target, extra)),
      fromUpstream: (body, target, request) => cohereShapedRerank(body, target, request),
    };
  }
  return {
    toUpstream: (request, target) => bearerJsonPost(target, spec.path, {
      model: target.upstreamModel,
      query: { text: request.query },
      passages: request.documents.map((text) => ({ text })),
    }),
    fromUpstream(body, target, request) {
      const answer = body as { rankings?: unknown; usage?: { total_tokens?: unknown } } | null;
      if (!answer || typeof answer !== 'object' || !Array.isArray(answer.rankings)) throw malformedAnswer(target, 'ranking answer (no rankings)');
      const scores = answer.rankings.map((r) => {
        const item = r as { index?: unknown; logit?: unknown } | null;
        return { index: item?.index, score: item?.logit };
      });
      return rerankResult({ scores, scale: 'logit', tokens: answer.usage?.total_tokens }, target, request);
    },
  };
}
