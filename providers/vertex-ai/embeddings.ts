/**
 * Embeddings on Vertex AI: the text embedding models' `:predict` (instances[{content, task_type}], parameters
 * {outputDimensionality, autoTruncate}). Each prediction's statistics.token_count gives the usage.
 */
import { embeddingInputs } from '../../core/canonical/embeddings.ts';
import type { EmbeddingsTranslator } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { bareModel, checkGoogleDimensions, googleSupportsDimensions } from '../gemini/embeddings.ts';
import { embeddingsResult, refuseBatchOver } from '../shared/embeddings.ts';
import { headers, isClaude, modelPath, resolved } from './chat.ts';

/** Vertex's text embedding API takes at most 250 input texts per request... */
export const VERTEX_EMBED_BATCH_LIMIT = 250;
/** ...and gemini-embedding-* one. */
const singleInstance = (upstreamModel: string) => /^gemini-embedding-/.test(bareModel(upstreamModel));

interface Prediction {
  embeddings?: { values?: unknown; statistics?: { token_count?: unknown; truncated?: unknown } };
}

export const vertexEmbeddings: EmbeddingsTranslator = {
  toUpstream(request, target) {
    if (isClaude(target)) {
      throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${target.slug} does not support embeddings for Claude models`, { provider: target.slug, capability: 'embeddings' });
    }
    const inputs = embeddingInputs(request);
    refuseBatchOver(target, inputs.length, singleInstance(target.upstreamModel) ? 1 : VERTEX_EMBED_BATCH_LIMIT, bareModel(target.upstreamModel));
    checkGoogleDimensions(target.upstreamModel, request.dimensions);
    const { embeddingTaskType, embeddingAutoTruncate } = target.options as { embeddingTaskType?: string; embeddingAutoTruncate?: boolean };
    const body = {
      instances: inputs.map((content) => ({ content, ...(embeddingTaskType ? { task_type: embeddingTaskType } : {}) })),
      parameters: {
        // Vertex cuts an input past the model's length unless told not to: the gateway asks for a refusal instead.
        autoTruncate: embeddingAutoTruncate === true,
        ...(request.dimensions !== undefined ? { outputDimensionality: request.dimensions } : {}),
      },
    };
    return { method: 'POST', path: resolved(target, `${modelPath(target, 'google')}:predict`), headers: headers(target), body: JSON.stringify(body) };
  },
  fromUpstream(body, target, request) {
    const predictions = (body as { predictions?: unknown } | null)?.predictions;
    const list = Array.isArray(predictions) ? predictions as Array<Prediction | null> : undefined;
    const counts = list?.map((p) => p?.embeddings?.statistics?.token_count);
    // Usage only when every prediction counted its tokens: a partial sum would under-bill.
    const tokens = counts?.every((c): c is number => typeof c === 'number' && Number.isInteger(c) && c >= 0) ? counts.reduce((sum, c) => sum + c, 0) : undefined;
    return embeddingsResult(list?.map((p) => p?.embeddings?.values), target, request, tokens);
  },
  supportsDimensions: googleSupportsDimensions,
};

export const vertexEmbeddingOptions = {
  embeddingAutoTruncate: {
    type: 'boolean', default: false,
    description: 'Embeddings: let Vertex AI cut inputs longer than the model takes (autoTruncate). Off, such an input is refused upstream (400 UPSTREAM_BAD_REQUEST).',
  },
};
