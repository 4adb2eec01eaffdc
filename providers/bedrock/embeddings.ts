/**
 * Embeddings on Bedrock through InvokeModel (POST /model/{id}/invoke), whose body is the model's own: Amazon
 * Titan Text Embeddings take one inputText per call, Cohere Embed takes texts[] (up to 96). The upstream model
 * id (a foundation model, an inference profile such as us.cohere.embed-v4:0, or an ARN ending in one) picks
 * the body. Signing is the provider's authorize, as for chat.
 */
import { embeddingInputs } from '../../core/canonical/embeddings.ts';
import type { EmbeddingsTranslator, ProviderTarget, UpstreamRequest } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { COHERE_INPUT_TYPES, DEFAULT_INPUT_TYPE } from '../cohere/embed.ts';
import { checkDimensions, embeddingsResult, refuseBatchOver } from '../shared/embeddings.ts';
import { uriEncode } from './sigv4.ts';

/** InvokeModel (embeddings and rerank): the model's own JSON body, the model id one path segment. */
export function invokeModel(target: ProviderTarget, body: unknown): UpstreamRequest {
  return {
    method: 'POST',
    path: `/model/${uriEncode(target.upstreamModel)}/invoke`,
    headers: { 'content-type': 'application/json', accept: 'application/json', ...target.headers },
    body: JSON.stringify(body),
  };
}

/** Cohere Embed on Bedrock takes 0 to 96 texts per call. */
export const COHERE_EMBED_BATCH_LIMIT = 96;
/** The vector sizes Titan Text Embeddings V2 offers (1024 is its default). */
export const TITAN_V2_DIMENSIONS = [256, 512, 1024] as const;
/** The output_dimension values Cohere Embed v4 offers (1536 is its default); v3 has none. */
export const COHERE_V4_DIMENSIONS = [256, 512, 1024, 1536] as const;

export const bedrockEmbeddingOptions = {
  embeddingInputType: {
    type: 'string', enum: [...COHERE_INPUT_TYPES], default: DEFAULT_INPUT_TYPE,
    description: 'Embeddings with Cohere Embed models: the input_type sent with every request (search_query for queries against a corpus embedded as search_document).',
  },
};

interface EmbedModel {
  /** At most this many inputs per call. */
  maxInputs: number;
  /** The vector sizes the model can be asked for; absent: none (no dimensions). */
  dimensions?: readonly number[];
  body(inputs: string[], request: { dimensions?: number }, target: ProviderTarget): unknown;
  /** The answer's vectors, in input order, and its input token count when it has one. */
  read(body: unknown): { vectors: unknown[] | undefined; tokens?: unknown };
}

const titan = (dimensions?: readonly number[]): EmbedModel => ({
  maxInputs: 1,
  ...(dimensions ? { dimensions } : {}),
  body: ([inputText], request) => ({ inputText, ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}) }),
  read: (body) => {
    const b = body as { embedding?: unknown; inputTextTokenCount?: unknown } | null;
    return { vectors: b && 'embedding' in b ? [b.embedding] : undefined, tokens: b?.inputTextTokenCount };
  },
});

const cohere = (dimensions?: readonly number[]): EmbedModel => ({
  maxInputs: COHERE_EMBED_BATCH_LIMIT,
  ...(dimensions ? { dimensions } : {}),
  body: (texts, request, target) => {
    const { embeddingInputType } = target.options as { embeddingInputType?: string };
    // truncate NONE (Cohere's default, said aloud): an input past the model's length is refused, not cut.
    return {
      texts, input_type: embeddingInputType || DEFAULT_INPUT_TYPE, truncate: 'NONE',
      ...(request.dimensions !== undefined ? { output_dimension: request.dimensions } : {}),
    };
  },
  read: (body) => {
    // embeddings_floats: a list of vectors; embeddings_by_type: {float: [...]}.
    const embeddings = (body as { embeddings?: unknown } | null)?.embeddings;
    const vectors = Array.isArray(embeddings) ? embeddings : (embeddings as { float?: unknown } | null | undefined)?.float;
    return { vectors: Array.isArray(vectors) ? vectors : undefined };
  },
});

/** The model behind an id, or null for a model that has no embeddings body here. */
export function embedModel(upstreamModel: string): EmbedModel | null {
  const id = upstreamModel.split('/').at(-1)!;
  if (/(?:^|\.)amazon\.titan-embed-text-v2/.test(id)) return titan(TITAN_V2_DIMENSIONS);
  if (/(?:^|\.)amazon\.titan-embed-(?:text-v1|g1-text)/.test(id)) return titan();
  if (/(?:^|\.)cohere\.embed-v4/.test(id)) return cohere(COHERE_V4_DIMENSIONS);
  if (/(?:^|\.)cohere\.embed-/.test(id)) return cohere();
  return null;
}

function modelFor(target: ProviderTarget): EmbedModel {
  const model = embedModel(target.upstreamModel);
  if (!model) {
    throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${target.slug} does not support embeddings with ${target.upstreamModel} (Titan Text Embeddings and Cohere Embed models do)`, { provider: target.slug, capability: 'embeddings' });
  }
  return model;
}

function check(model: EmbedModel, target: ProviderTarget, count: number, dimensions: number | undefined): void {
  refuseBatchOver(target, count, model.maxInputs);
  if (dimensions !== undefined && model.dimensions) checkDimensions(target, dimensions, model.dimensions);
}

export const bedrockEmbeddings: EmbeddingsTranslator = {
  toUpstream(request, target): UpstreamRequest {
    const model = modelFor(target);
    const inputs = embeddingInputs(request);
    check(model, target, inputs.length, request.dimensions);
    return invokeModel(target, model.body(inputs, request, target));
  },
  fromUpstream(body, target, request) {
    const { vectors, tokens } = modelFor(target).read(body);
    return embeddingsResult(vectors, target, request, tokens);
  },
  supportsDimensions: (upstreamModel) => embedModel(upstreamModel)?.dimensions !== undefined,
};
