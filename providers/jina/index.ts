/**
 * Jina AI: embeddings (/embeddings, OpenAI-shaped, with Jina's `task`, `dimensions` and `embedding_type`) and
 * rerank (/rerank, Cohere-shaped). Floats are asked for (`embedding_type: float`); the gateway encodes them when
 * the caller wants base64. Jina returns the documents with the scores unless told not to, and the gateway adds
 * them itself, so `return_documents: false`. Jina bills by tokens (usage); search units follow Cohere's rule.
 */
import type { EmbeddingsTranslator, RerankTranslator } from '../../core/dispatch/provider.ts';
import { defineProvider } from '../../core/dispatch/provider.ts';
import { bearerJsonPost, cohereShapedBody, cohereShapedRerank } from '../cohere/rerank.ts';
import { openaiErrorFromBody } from '../openai/errors.ts';
import { embeddingsResult, indexedVectors, malformedAnswer } from '../shared/embeddings.ts';

/** Matryoshka models, which take `dimensions` (jina-embeddings-v2 and the v1 CLIP have a fixed size). */
const FLEXIBLE = /^jina-(embeddings-v[3-9]|clip-v2|code-embeddings)/;

const embeddings: EmbeddingsTranslator = {
  toUpstream(request, target) {
    const { task } = target.options as { task?: string };
    const body: Record<string, unknown> = { model: target.upstreamModel, input: request.input, embedding_type: 'float' };
    if (task) body.task = task;
    if (request.dimensions !== undefined) body.dimensions = request.dimensions;
    return bearerJsonPost(target, '/embeddings', body);
  },
  fromUpstream(body, target, request) {
    const answer = body as { data?: unknown; usage?: { total_tokens?: unknown; prompt_tokens?: unknown } } | null;
    if (!answer || typeof answer !== 'object') throw malformedAnswer(target, 'embeddings answer');
    return embeddingsResult(indexedVectors(answer.data, target), target, request, answer.usage?.prompt_tokens ?? answer.usage?.total_tokens);
  },
  supportsDimensions: (model) => FLEXIBLE.test(model),
};

const rerank: RerankTranslator = {
  toUpstream: (request, target) => bearerJsonPost(target, '/rerank', cohereShapedBody(request, target, { return_documents: false })),
  fromUpstream: (body, target, request) => cohereShapedRerank(body, target, request),
};

export default defineProvider({
  slug: 'jina',
  family: 'jina',
  displayName: 'Jina AI',
  defaultBaseUrl: 'https://api.jina.ai/v1',
  configSchema: {
    type: 'object', additionalProperties: false,
    description: 'Jina AI options. The API key (apiKey) is sent as a bearer token.',
    properties: {
      task: {
        type: 'string', enum: ['retrieval.query', 'retrieval.passage', 'text-matching', 'classification', 'separation'],
        description: "Jina's task of every embeddings request (jina-embeddings-v3 and later; the OpenAI request has no such field). Unset: the model's default.",
      },
    },
  },
  capabilities: { embeddings: {}, rerank: {} },
  embeddings,
  rerank,
  // Jina answers errors as {detail: "..."}, which the OpenAI-family reader understands.
  mapError: (status, body, target) => openaiErrorFromBody(target, status, body),
});
