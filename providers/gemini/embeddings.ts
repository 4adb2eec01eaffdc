/**
 * Embeddings on the Gemini API: one `:batchEmbedContents` call for one input or many, whose answer keeps the
 * order of its requests. Gemini reports no token count for embeddings, so usage is left to the gateway.
 */
import { embeddingInputs } from '../../core/canonical/embeddings.ts';
import type { EmbeddingsTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { embeddingsResult, refuseBatchOver } from '../shared/embeddings.ts';
import { geminiApiHeaders, generativeLanguageModelPath } from './chat.ts';

/** batchEmbedContents refuses more requests than this in one call ("at most 100 requests can be in one batch"). */
export const GEMINI_EMBED_BATCH_LIMIT = 100;

/** The task types both Google embedding APIs accept (taskType on the Gemini API, task_type on Vertex AI). */
export const EMBEDDING_TASK_TYPES = [
  'RETRIEVAL_QUERY', 'RETRIEVAL_DOCUMENT', 'SEMANTIC_SIMILARITY', 'CLASSIFICATION', 'CLUSTERING', 'QUESTION_ANSWERING', 'FACT_VERIFICATION', 'CODE_RETRIEVAL_QUERY',
] as const;

export const embeddingTaskTypeOption = {
  type: 'string',
  enum: [...EMBEDDING_TASK_TYPES],
  description: 'Embeddings: the task type sent with every input (taskType / task_type), e.g. RETRIEVAL_DOCUMENT for a corpus. Absent: the model\'s default.',
};

/** `models/text-embedding-004` -> text-embedding-004: the bare model name, whatever path the operator wrote. */
export const bareModel = (upstreamModel: string) => upstreamModel.split('/').at(-1)!.split('@')[0]!;

/**
 * The largest vector of the Google models that take a reduced dimensionality; a model not listed has no known
 * bound, and the upstream judges. Google's models truncate the full vector, so anything from 1 to this is valid.
 */
const MAX_DIMENSIONS: Array<[RegExp, number]> = [
  [/^gemini-embedding-/, 3072],
  [/^text-embedding-00[4-9]$/, 768],
  [/^text-multilingual-embedding-/, 768],
  [/^text-embedding-large-exp/, 3072],
];

/** Models that take outputDimensionality: the 2024 ones and later. embedding-001 and the gecko models do not. */
export function googleSupportsDimensions(upstreamModel: string): boolean {
  const model = bareModel(upstreamModel);
  return MAX_DIMENSIONS.some(([pattern]) => pattern.test(model));
}

/** A dimensions value past the model's full vector is refused, never passed on to be cut or ignored. */
export function checkGoogleDimensions(upstreamModel: string, dimensions: number | undefined): void {
  if (dimensions === undefined) return;
  const max = MAX_DIMENSIONS.find(([pattern]) => pattern.test(bareModel(upstreamModel)))?.[1];
  if (max !== undefined && dimensions > max) {
    throw new GatewayError('VALIDATION_ERROR', `${bareModel(upstreamModel)} returns at most ${max} dimensions, not ${dimensions}`, [
      { path: '/dimensions', message: `must be at most ${max} for ${bareModel(upstreamModel)}` },
    ]);
  }
}

export const geminiEmbeddings: EmbeddingsTranslator = {
  toUpstream(request, target) {
    const inputs = embeddingInputs(request);
    refuseBatchOver(target, inputs.length, GEMINI_EMBED_BATCH_LIMIT, bareModel(target.upstreamModel));
    checkGoogleDimensions(target.upstreamModel, request.dimensions);
    const path = generativeLanguageModelPath(target);
    // Each request names its model as a resource (models/...), which must be the one in the URL.
    const model = decodeURIComponent(path.slice(1));
    const { embeddingTaskType } = target.options as { embeddingTaskType?: string };
    const requests = inputs.map((text) => ({
      model,
      content: { parts: [{ text }] },
      ...(embeddingTaskType ? { taskType: embeddingTaskType } : {}),
      ...(request.dimensions !== undefined ? { outputDimensionality: request.dimensions } : {}),
    }));
    return { method: 'POST', path: `${path}:batchEmbedContents`, headers: geminiApiHeaders(target), body: JSON.stringify({ requests }) };
  },
  fromUpstream(body, target, request) {
    const embeddings = (body as { embeddings?: unknown } | null)?.embeddings;
    const vectors = Array.isArray(embeddings) ? embeddings.map((e) => (e as { values?: unknown } | null)?.values) : undefined;
    return embeddingsResult(vectors, target, request);
  },
  supportsDimensions: googleSupportsDimensions,
};
