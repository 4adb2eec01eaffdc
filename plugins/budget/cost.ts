/**
 * What a request may cost before it runs (the reservation) and what it did cost (the settlement), in integer
 * micro-dollars, from the `pricing` of the model it is served with (after the caller's policy overrides).
 * Prices and rounding are the usage plugin's (core/canonical/pricing.ts), so that counters rebuilt from usage records
 * match the counters requests kept.
 */
import type { CanonicalRequest, CanonicalResult } from '../../core/canonical/chat.ts';
import type { GatewayConfig, ModelConfig } from '../../core/config/types.ts';
import { allowsModel, overriddenModel, type EffectivePolicy } from '../../core/identity/policy.ts';
import { costUsd, isPriced, toMicroUsd, type PricedUsage, type Pricing } from '../../core/canonical/pricing.ts';
import { speechCharacters } from '../../core/canonical/audio.ts';
import {
  estimateAudioSeconds, estimateInputTokens, estimateInputTokensNow, estimateSearchUnits, meteredAsAnswered, meteredResult, pricedUsage, type Metered,
} from '../../core/canonical/units.ts';

export type ModelPrice =
  /** Not a model this caller can use: routing refuses it, nothing to reserve. */
  | { kind: 'unroutable' }
  | { kind: 'unpriced'; modelId: string }
  | { kind: 'priced'; modelId: string; pricing: Pricing; model: ModelConfig };

/** The enabled models of each config by id, made once: every budgeted request looks its model up. */
const enabledModels = new WeakMap<GatewayConfig, ReadonlyMap<string, ModelConfig>>();

function enabledModel(config: GatewayConfig, id: string): ModelConfig | undefined {
  let byId = enabledModels.get(config);
  if (!byId) {
    // The first of an id wins, as find() did.
    const map = new Map<string, ModelConfig>();
    for (const model of config.models) if (model.enabled && !map.has(model.id)) map.set(model.id, model);
    enabledModels.set(config, (byId = map));
  }
  return byId.get(id);
}

export function modelPrice(config: GatewayConfig, policy: EffectivePolicy, requested: string): ModelPrice {
  const modelId = overriddenModel(policy, requested);
  const model = enabledModel(config, modelId);
  if (!model || !allowsModel(policy, modelId)) return { kind: 'unroutable' };
  const pricing = model.pricing;
  if (!isPriced(pricing)) return { kind: 'unpriced', modelId };
  return { kind: 'priced', modelId, pricing, model };
}

export function costMicros(pricing: Pricing, usage: PricedUsage): number {
  return toMicroUsd(costUsd(pricing, usage) ?? 0);
}

/**
 * The reservation, by modality:
 * - chat: the prompt as the gateway's tokenizer counts it (no cached tokens assumed), plus the most completion
 *   tokens the request allows: max_completion_tokens, else max_tokens, else the model's max_output_tokens, else
 *   `defaultCompletionTokens`; times n choices;
 * - embeddings: the inputs' tokens at `input`;
 * - rerank: one search unit per started hundred documents at `searchUnit`, plus the query read beside every
 *   document and the documents at `input` (counted only when the model has an input price); it settles to the
 *   search units billed and the tokens reported, if any (core/canonical/units.ts);
 * - transcription and translation: the most seconds the file's size can hold (core/canonical/units.ts) at
 *   `audioSecond`, settled to the seconds heard;
 * - speech: exactly the input's characters (code points) at `characters`: the provider bills the whole text;
 * - image: exactly the images asked for (n) at the `image` price of the asked size and quality;
 * - video: the seconds asked for (VIDEO_ESTIMATE_SECONDS when the caller leaves it to the provider) at
 *   `videoSecond`. The request that starts a job settles to nothing: the job is charged its real seconds when it
 *   completes (metered work), so the reservation only gates the start.
 */
export function estimateMicros(price: Extract<ModelPrice, { kind: 'priced' }>, request: CanonicalRequest, defaultCompletionTokens: number): number | Promise<number> {
  const counted = request.modality === 'chat' || request.modality === 'embeddings' || (request.modality === 'rerank' && price.pricing.input);
  if (!counted) return pricedEstimate(price, request, defaultCompletionTokens, 0);
  // Counted within the call once the tokenizer is loaded (and once per body: ratelimit's count is reused).
  const tokens = estimateInputTokensNow(request);
  if (tokens !== undefined) return pricedEstimate(price, request, defaultCompletionTokens, tokens);
  return estimateInputTokens(request).then((later) => pricedEstimate(price, request, defaultCompletionTokens, later));
}

/** The reservation given the input's tokens (0 where the modality counts none). */
function pricedEstimate(price: Extract<ModelPrice, { kind: 'priced' }>, request: CanonicalRequest, defaultCompletionTokens: number, tokens: number): number {
  const { pricing } = price;
  switch (request.modality) {
    case 'chat': {
      const { body } = request;
      const perChoice = body.max_completion_tokens ?? body.max_tokens ?? price.model.max_output_tokens ?? defaultCompletionTokens;
      const choices = typeof body.n === 'number' && body.n > 1 ? body.n : 1;
      return costMicros(pricing, { prompt_tokens: tokens, completion_tokens: perChoice * choices });
    }
    case 'embeddings':
      return costMicros(pricing, { prompt_tokens: tokens, completion_tokens: 0 });
    case 'rerank':
      return costMicros(pricing, { prompt_tokens: tokens, completion_tokens: 0, search_units: estimateSearchUnits(request.body.documents.length) });
    case 'transcription': case 'translation':
      return costMicros(pricing, { prompt_tokens: 0, completion_tokens: 0, audio_seconds: estimateAudioSeconds(request.body.audio.bytes.length) });
    case 'speech':
      return costMicros(pricing, { prompt_tokens: 0, completion_tokens: 0, characters: speechCharacters(request.body.input) });
    case 'image':
      return costMicros(pricing, { prompt_tokens: 0, completion_tokens: 0, images: request.body.n, image_size: request.body.size, image_quality: request.body.quality });
    case 'video':
      return costMicros(pricing, { prompt_tokens: 0, completion_tokens: 0, video_seconds: request.body.seconds ?? VIDEO_ESTIMATE_SECONDS });
  }
}

/** Seconds a video request that names none is reserved for: the longest default of the providers served (Veo's 8, Sora's 4...). */
export const VIDEO_ESTIMATE_SECONDS = 10;

/**
 * The cost of a complete answer, as the usage plugin records it: its tokens (reported, or estimated for
 * embeddings) and search units. A chat answer without usage keeps the estimate, as before any modality existed.
 */
export function answerMicros(pricing: Pricing, request: CanonicalRequest, result: CanonicalResult | undefined, estimate: number): number | Promise<number> {
  if (!result) return estimate;
  if (result.object === 'video.generation') return 0;
  // What the answer says it used, within the call; only an embeddings answer without usage is counted first.
  const metered = meteredAsAnswered(request, result, false);
  if (metered) return meteredMicros(pricing, metered, estimate);
  return meteredResult(request, result, false).then((counted) => meteredMicros(pricing, counted, estimate));
}

function meteredMicros(pricing: Pricing, metered: Metered, estimate: number): number {
  const { usage, searchUnits, audioSeconds, characters, images } = metered;
  if (!usage && searchUnits === 0 && audioSeconds === 0 && characters === 0 && images === 0) return estimate;
  return costMicros(pricing, pricedUsage(metered));
}
