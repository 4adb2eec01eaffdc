/**
 * Canonical embeddings <-> Cohere's /v2/embed. Cohere offers float, int8, uint8, binary and ubinary vectors but
 * no base64 of float32, so floats are asked for and the gateway encodes them when the caller wants base64.
 * `input_type` (required by v3 and later models) has no field in the OpenAI request: it comes from the
 * provider's `embeddingInputType` option, search_document by default (what a vector store holds).
 * `truncate: NONE` makes an over-long input an error, as on OpenAI, rather than silently embedding part of it.
 */
import type { EmbeddingsTranslator } from '../../core/dispatch/provider.ts';
import { embeddingInputs } from '../../core/canonical/embeddings.ts';
import { checkDimensions, embeddingsResult, malformedAnswer } from '../shared/embeddings.ts';
import { cohereHeaders } from './request.ts';

/** Cohere Embed's input types, on Cohere's API and on Bedrock alike. */
export const COHERE_INPUT_TYPES = ['search_document', 'search_query', 'classification', 'clustering'] as const;
export const DEFAULT_INPUT_TYPE = 'search_document';
/** embed-v4 models return 256, 512, 1024 or 1536 dimensions (output_dimension); earlier ones a fixed size. */
const V4 = /^embed-v4/;
const V4_DIMENSIONS = [256, 512, 1024, 1536] as const;

export const cohereEmbeddings: EmbeddingsTranslator = {
  toUpstream(request, target) {
    const { embeddingInputType } = target.options as { embeddingInputType?: string };
    const body: Record<string, unknown> = {
      model: target.upstreamModel,
      texts: embeddingInputs(request),
      input_type: embeddingInputType ?? DEFAULT_INPUT_TYPE,
      embedding_types: ['float'],
      truncate: 'NONE',
    };
    if (request.dimensions !== undefined) {
      checkDimensions(target, request.dimensions, V4_DIMENSIONS);
      body.output_dimension = request.dimensions;
    }
    return { method: 'POST', path: '/v2/embed', headers: cohereHeaders(target, false), body: JSON.stringify(body) };
  },
  fromUpstream(body, target, request) {
    const answer = body as { embeddings?: { float?: unknown }; meta?: { billed_units?: { input_tokens?: unknown } } } | null;
    if (!answer || typeof answer !== 'object' || !answer.embeddings || typeof answer.embeddings !== 'object') throw malformedAnswer(target, 'embed answer (no embeddings)');
    return embeddingsResult(answer.embeddings.float, target, request, answer.meta?.billed_units?.input_tokens);
  },
  supportsDimensions: (model) => V4.test(model),
};
