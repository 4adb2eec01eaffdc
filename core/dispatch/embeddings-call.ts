/**
 * One embeddings call to one provider target. What the target cannot do (no embeddings, `dimensions` on a model
 * without reduction) is refused before any I/O. The answer is checked before the caller sees it: one vector per
 * input, indexes that are a permutation of the inputs, vectors that decode, of the asked length; then it is
 * sorted by index and given in the caller's encoding_format, whichever encoding the provider returned.
 */
import type { CanonicalEmbeddingsRequest, EmbeddingsRequest, EmbeddingsResult, Vector } from '../canonical/embeddings.ts';
import { base64ToVector, embeddingInputs, vectorToBase64 } from '../canonical/embeddings.ts';
import { estimateEmbeddingsTokens } from '../canonical/estimate.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import { badAnswer, exchangeJson, markRouted, unsupported, type CallDeps } from './exchange.ts';
import type { EmbeddingsTranslator, ProviderDefinition, ProviderTarget } from './provider.ts';
import { callSignal } from '../pipeline/abort.ts';

/** The provider's embeddings translator, once the target can serve the request. */
export function embeddingsTranslatorFor(provider: ProviderDefinition, target: ProviderTarget, request: EmbeddingsRequest): EmbeddingsTranslator {
  if (!provider.capabilities.embeddings || !provider.embeddings) throw unsupported(provider.slug, 'embeddings', { capability: 'embeddings' });
  if (request.dimensions !== undefined && !provider.embeddings.supportsDimensions(target.upstreamModel)) {
    throw unsupported(provider.slug, `dimensions (shorter vectors) for the model ${target.upstreamModel}`, { capability: 'dimensions', model: target.upstreamModel });
  }
  return provider.embeddings;
}

export function checkEmbeddings(provider: ProviderDefinition, target: ProviderTarget, request: CanonicalEmbeddingsRequest): void {
  embeddingsTranslatorFor(provider, target, request.body);
}

const isNumberArray = (value: unknown): value is number[] => Array.isArray(value) && value.every((x) => typeof x === 'number');

/** One vector in the caller's encoding; a vector that is neither floats nor decodable base64 is the provider's fault. */
function encode(target: ProviderTarget, vector: unknown, index: number, format: 'float' | 'base64', dimensions: number | undefined): Vector {
  const floats = typeof vector === 'string' ? base64ToVector(vector) : isNumberArray(vector) ? vector : null;
  if (!floats || floats.length === 0 || !floats.every(Number.isFinite)) throw badAnswer(target, `an embedding (index ${index}) that is neither floats nor base64 float32`);
  if (dimensions !== undefined && floats.length !== dimensions) {
    // The peers' silent bug: a provider that ignores `dimensions` would hand back full-length vectors.
    throw badAnswer(target, `${floats.length}-dimensional vectors where ${dimensions} were asked`);
  }
  if (format === 'float') return floats;
  return typeof vector === 'string' ? vector : vectorToBase64(floats);
}

/** The translator's answer, checked and put in order: never a vector silently attached to another input. */
export function finishEmbeddings(target: ProviderTarget, request: EmbeddingsRequest, result: EmbeddingsResult): EmbeddingsResult {
  const count = embeddingInputs(request).length;
  if (!result || !Array.isArray(result.data)) throw badAnswer(target, 'an embeddings answer without data');
  if (result.data.length !== count) throw badAnswer(target, `${result.data.length} embeddings for ${count} inputs`);
  const seen = new Set<number>();
  for (const item of result.data) {
    const index = item?.index;
    if (!Number.isInteger(index) || index < 0 || index >= count || seen.has(index)) {
      throw badAnswer(target, 'embedding indexes that are not one per input');
    }
    seen.add(index);
  }
  const format = request.encoding_format ?? 'float';
  const data = [...result.data].sort((a, b) => a.index - b.index).map((item) => ({
    object: 'embedding' as const,
    embedding: encode(target, item.embedding, item.index, format, request.dimensions),
    index: item.index,
  }));
  const finished: EmbeddingsResult = { object: 'list', data, model: target.upstreamModel };
  if (result.usage) finished.usage = result.usage;
  return finished;
}

export async function callEmbeddings(ctx: GatewayContext, deps: CallDeps, provider: ProviderDefinition, target: ProviderTarget): Promise<void> {
  const gw = ctx.state.gw;
  const request = gw.canonical as CanonicalEmbeddingsRequest;
  const translator = embeddingsTranslatorFor(provider, target, request.body);
  const body = await exchangeJson(deps, provider, target, translator.toUpstream(request.body, target), callSignal(gw));
  const result = finishEmbeddings(target, request.body, translator.fromUpstream(body, target, request.body));
  markRouted(ctx, target, request.model);
  if (!result.usage) {
    const tokens = await estimateEmbeddingsTokens(request.body);
    result.usage = { prompt_tokens: tokens, completion_tokens: 0, total_tokens: tokens };
    gw.usageEstimated = true;
  }
  gw.result = result;
}
