/**
 * Voyage AI: embeddings (/embeddings, OpenAI-shaped) and rerank (/rerank). Voyage's base64 vectors are its
 * float32 values little-endian, as OpenAI's are: a caller's base64 is asked for as it is. `input_type` has no
 * field in the OpenAI request; options.inputType sets it (Voyage's default, none, embeds the text as given).
 * `truncation: false` makes an over-long input an error, as on OpenAI. Voyage bills rerank by tokens (usage);
 * its search units are counted by Cohere's rule, one per 100 documents.
 */
import type { EmbeddingsTranslator, RerankTranslator } from '../../core/dispatch/provider.ts';
import { defineProvider } from '../../core/dispatch/provider.ts';
import { bearerJsonPost, cohereShapedBody, cohereShapedRerank } from '../cohere/rerank.ts';
import { openaiErrorFromBody } from '../openai/errors.ts';
import { checkDimensions, embeddingsResult, indexedVectors, malformedAnswer } from '../shared/embeddings.ts';

/** Models with output_dimension (Matryoshka): 256, 512, 1024 (their default) or 2048. */
const FLEXIBLE = /^voyage-(3\.5|3\.5-lite|3-large|code-3|context-3|4)(\b|-)/;
const DIMENSIONS = [256, 512, 1024, 2048] as const;

const embeddings: EmbeddingsTranslator = {
  toUpstream(request, target) {
    const { inputType } = target.options as { inputType?: string };
    const body: Record<string, unknown> = { model: target.upstreamModel, input: request.input, truncation: false };
    if (inputType) body.input_type = inputType;
    if (request.dimensions !== undefined) {
      checkDimensions(target, request.dimensions, DIMENSIONS);
      body.output_dimension = request.dimensions;
    }
    if (request.encoding_format === 'base64') body.encoding_format = 'base64';
    return bearerJsonPost(target, '/embeddings', body);
  },
  fromUpstream(body, target, request) {
    const answer = body as { data?: unknown; usage?: { total_tokens?: unknown } } | null;
    if (!answer || typeof answer !== 'object') throw malformedAnswer(target, 'embeddings answer');
    return embeddingsResult(indexedVectors(answer.data, target), target, request, answer.usage?.total_tokens);
  },
  supportsDimensions: (model) => FLEXIBLE.test(model),
};

const rerank: RerankTranslator = {
  toUpstream(request, target) {
    // Voyage names top_n `top_k`; the documents come back from the gateway, not from Voyage.
    const { top_n: topN, ...rest } = cohereShapedBody(request, target, { return_documents: false });
    return bearerJsonPost(target, '/rerank', { ...rest, ...(topN !== undefined ? { top_k: topN } : {}) });
  },
  fromUpstream: (body, target, request) => cohereShapedRerank(body, target, request),
};

export default defineProvider({
  slug: 'voyage',
  family: 'voyage',
  displayName: 'Voyage AI',
  defaultBaseUrl: 'https://api.voyageai.com/v1',
  configSchema: {
    type: 'object', additionalProperties: false,
    description: 'Voyage AI options. The API key (apiKey) is sent as a bearer token.',
    properties: {
      inputType: {
        type: 'string', enum: ['query', 'document'],
        description: 'input_type of every embeddings request (the OpenAI request has no such field): document for texts a vector store holds, query for queries against them. Unset: none, the text is embedded as given.',
      },
    },
  },
  capabilities: { embeddings: {}, rerank: {} },
  embeddings,
  rerank,
  // Voyage answers errors as {detail: "..."}, which the OpenAI-family reader understands.
  mapError: (status, body, target) => openaiErrorFromBody(target, status, body),
});
