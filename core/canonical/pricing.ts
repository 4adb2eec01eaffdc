/**
 * What a request cost, from the model's `pricing`: USD per million tokens, USD per rerank search unit and USD per
 * second of audio heard, and USD per million characters spoken. Cached
 * prompt tokens are priced at `cachedInput` when it is given, otherwise at `input`; completion tokens (reasoning
 * tokens included, as providers count them) at `output`; search units (rerank) at `searchUnit`. The same prices
 * serve every modality: embeddings have only input tokens, a rerank has its search units and whatever tokens its
 * provider reports, transcription and translation their seconds of audio at `audioSecond`, speech the code points of its input
 * at `characters`, images their count at `image` (by size and quality), video its seconds at `videoSecond`. A price the model
 * leaves out counts as 0; a model without `pricing`, or with none of these prices, has no cost: null, never a
 * guessed 0.
 */
import type { Usage } from './chat.ts';
import type { ModelConfig } from '../config/types.ts';

export type Pricing = NonNullable<ModelConfig['pricing']>;

export type PricedUsage = Pick<Usage, 'prompt_tokens' | 'completion_tokens' | 'prompt_tokens_details'> & {
  /** Rerank: the search units billed (meta.billed_units.search_units). */
  search_units?: number;
  /** Transcription and translation: seconds of audio. */
  audio_seconds?: number;
  /** Speech: characters of input spoken. */
  characters?: number;
  /** Image generation: images made, at the size and quality asked. */
  images?: number;
  image_size?: string;
  image_quality?: string;
  /** Video generation: seconds of video made. */
  video_seconds?: number;
};

/** USD per image at this size and quality: the most specific of `<quality>/<size>`, `<size>`, `<quality>`, `default`. */
export function imagePrice(price: Pricing['image'], size: string | undefined, quality: string | undefined): number {
  if (price === undefined) return 0;
  if (typeof price === 'number') return price;
  const keys = [quality && size ? `${quality}/${size}` : undefined, size, quality, 'default'];
  for (const key of keys) if (key !== undefined && price[key] !== undefined) return price[key]!;
  return 0;
}

/** The cost in micro-dollars before rounding: tokens x USD per million tokens is exactly micro-dollars. */
function micros(pricing: Pricing, usage: PricedUsage): number {
  const prompt = Math.max(0, usage.prompt_tokens);
  const cached = Math.min(prompt, Math.max(0, usage.prompt_tokens_details?.cached_tokens ?? 0));
  const input = pricing.input ?? 0;
  const tokens = (prompt - cached) * input + cached * (pricing.cachedInput ?? input) + Math.max(0, usage.completion_tokens) * (pricing.output ?? 0);
  const audio = Math.max(0, usage.audio_seconds ?? 0) * (pricing.audioSecond ?? 0) * 1e6;
  // Characters x USD per million characters is exactly micro-dollars, as tokens are.
  const characters = Math.max(0, usage.characters ?? 0) * (pricing.characters ?? 0);
  const images = Math.max(0, usage.images ?? 0) * imagePrice(pricing.image, usage.image_size, usage.image_quality) * 1e6;
  const video = Math.max(0, usage.video_seconds ?? 0) * (pricing.videoSecond ?? 0) * 1e6;
  return tokens + Math.max(0, usage.search_units ?? 0) * (pricing.searchUnit ?? 0) * 1e6 + audio + characters + images + video;
}

/** Whether the model has a price at all (an unpriced model costs null, not 0). */
export function isPriced(pricing: Pricing | undefined): pricing is Pricing {
  return !!pricing && (pricing.input !== undefined || pricing.output !== undefined || pricing.searchUnit !== undefined
    || pricing.audioSecond !== undefined || pricing.characters !== undefined || pricing.image !== undefined || pricing.videoSecond !== undefined);
}

/** USD, or null when the model has no pricing. */
export function costUsd(pricing: Pricing | undefined, usage: PricedUsage): number | null {
  if (!isPriced(pricing)) return null;
  // Twelve decimals drop the binary noise of the multiplication (9 x 0.15 = 1.3499999999999999): whole
  // pico-dollars, then one division, which gives the double nearest that decimal. Unlike toFixed(12), no string is
  // made (this runs several times per request); the two agreed on 5,000,000 random token counts at common prices.
  return Math.round(micros(pricing, usage) * 1e6) / 1e12;
}

/** Integer micro-dollars, for exact counters (budgets): one rounding per amount, sums stay exact. */
export function toMicroUsd(usd: number): number {
  return Math.round(usd * 1e6);
}
