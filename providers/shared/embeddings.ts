/**
 * What every embeddings translator checks in an answer: one vector per input, in input order, each floats or
 * base64 of float32 values; and a `dimensions` value the model family takes.
 */
import type { Usage } from '../../core/canonical/chat.ts';
import { base64ToVector, embeddingInputs, type EmbeddingsRequest, type EmbeddingsResult, type Vector } from '../../core/canonical/embeddings.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';

export function malformedAnswer(target: ProviderTarget, what: string): GatewayError {
  return new GatewayError('UPSTREAM_ERROR', `${target.slug} returned a malformed ${what}`, { provider: target.slug });
}

function vectorOf(value: unknown, target: ProviderTarget): Vector {
  if (Array.isArray(value) && value.length > 0 && value.every((x) => typeof x === 'number' && Number.isFinite(x))) return value as number[];
  if (typeof value === 'string' && value !== '' && base64ToVector(value) !== null) return value;
  throw malformedAnswer(target, 'embedding (not a list of numbers nor base64 of float32 values)');
}

/** Input tokens as canonical usage: embeddings have no completion. */
export function embeddingsUsage(tokens: unknown): Usage | undefined {
  if (typeof tokens !== 'number' || !Number.isInteger(tokens) || tokens < 0) return undefined;
  return { prompt_tokens: tokens, completion_tokens: 0, total_tokens: tokens };
}

/** Vectors already in input order -> the canonical answer; a count that differs from the inputs is malformed. */
export function embeddingsResult(vectors: unknown, target: ProviderTarget, request: EmbeddingsRequest, tokens?: unknown): EmbeddingsResult {
  const expected = embeddingInputs(request).length;
  if (!Array.isArray(vectors) || vectors.length !== expected) {
    throw malformedAnswer(target, `embeddings answer (${Array.isArray(vectors) ? vectors.length : 'no'} vectors for ${expected} inputs)`);
  }
  const result: EmbeddingsResult = {
    object: 'list',
    data: vectors.map((v, index) => ({ object: 'embedding' as const, embedding: vectorOf(v, target), index })),
    model: target.upstreamModel,
  };
  const usage = embeddingsUsage(tokens);
  if (usage) result.usage = usage;
  return result;
}

/**
 * The OpenAI shape `data: [{embedding, index}]`, which Voyage and Jina answer too: put back in input order by
 * `index` (servers may answer a batch out of order), every position exactly once.
 */
export function indexedVectors(data: unknown, target: ProviderTarget): unknown[] {
  if (!Array.isArray(data)) throw malformedAnswer(target, 'embeddings answer (no data list)');
  const vectors = new Array<unknown>(data.length);
  for (const [position, item] of data.entries()) {
    const entry = item as { embedding?: unknown; index?: unknown } | null;
    const index = entry?.index ?? position;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= data.length || vectors[index] !== undefined) {
      throw malformedAnswer(target, 'embeddings answer (indexes are not each input once)');
    }
    vectors[index] = entry?.embedding;
  }
  return vectors;
}

/**
 * Models with a fixed set of output sizes: any other value is refused before any I/O, never rounded to a
 * neighbour.
 */
export function checkDimensions(target: ProviderTarget, dimensions: number, allowed: readonly number[]): void {
  if (allowed.includes(dimensions)) return;
  throw new GatewayError('VALIDATION_ERROR', `${target.upstreamModel} on ${target.slug} returns ${allowed.join(', ')} dimensions, not ${dimensions}`, [
    { path: '/dimensions', message: `must be one of ${allowed.join(', ')} for ${target.upstreamModel}` },
  ]);
}

/**
 * A batch larger than one call takes is refused before any I/O, naming the cap, rather than split or cut.
 * `model` is the name the message gives (a provider may shorten a resource path to the bare model).
 */
export function refuseBatchOver(target: ProviderTarget, count: number, limit: number, model = target.upstreamModel): void {
  if (count <= limit) return;
  throw new GatewayError(
    'CAPABILITY_NOT_SUPPORTED',
    `Provider ${target.slug} embeds at most ${limit} input${limit === 1 ? '' : 's'} per request with ${model} (got ${count})`,
    { provider: target.slug, capability: 'embeddings', maxInputs: limit },
  );
}
