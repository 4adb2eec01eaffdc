/**
 * What a request counts, by modality, for the plugins that meter it (ratelimit, budget, usage): its input tokens
 * before the call, and what it used once answered: tokens, and for rerank the search units it was billed.
 *
 * - chat and completion: the prompt (core/canonical/estimate.ts) and the completion; the dispatcher estimates
 *   the usage of a provider that reports none.
 * - embeddings: the inputs' tokens; there is no completion.
 * - rerank: search units, one per query with up to 100 documents (Cohere's definition, which the others that bill
 *   per search follow), and tokens: the query read beside every document plus the documents (Voyage's total
 *   tokens). Before the call both are estimated; once answered, a rerank has the search units its provider
 *   billed (or the dispatcher counted by that rule) and the tokens it reported, else the dispatcher's estimate.
 */
import type { AudioUsage } from './audio.ts';
import type { ImageUsage } from './image.ts';
import type { CanonicalRequest, CanonicalResult, Modality, Usage } from './chat.ts';
import type { PricedUsage } from './pricing.ts';
import {
  estimateEmbeddingsTokens, estimateEmbeddingsTokensNow, estimatePromptTokens, estimatePromptTokensNow, estimateRerankTokens, estimateRerankTokensNow,
} from './estimate.ts';
import { searchUnitsFor } from './rerank.ts';

/** The modality of each dispatch route, for requests whose body never parsed (a 400 is recorded too). */
const ROUTE_MODALITY: Readonly<Record<string, Modality>> = {
  '/v1/chat/completions': 'chat',
  '/v1/messages': 'chat',
  '/v1/completions': 'completion',
  '/v1/embeddings': 'embeddings',
  '/v1/rerank': 'rerank',
  '/v1/audio/transcriptions': 'transcription',
  '/v1/audio/translations': 'translation',
  '/v1/audio/speech': 'speech',
  '/v1/images/generations': 'image',
  '/v1/video/generations': 'video',
};

/**
 * The modality a request is metered as. The legacy completions endpoint is served by a chat request and
 * recorded as `completion`, so its traffic can be told apart.
 */
export function meteredModality(request: CanonicalRequest | undefined, route: string): Modality {
  const byRoute = ROUTE_MODALITY[route];
  if (!request) return byRoute ?? 'chat';
  return request.modality === 'chat' && byRoute === 'completion' ? 'completion' : request.modality;
}

/** Search units of a rerank before the call: the rule a provider that reports none is billed by. */
export const estimateSearchUnits = searchUnitsFor;

/**
 * The input tokens of a request before the call (counted once per body, whichever plugin asks first). Audio is
 * billed by its seconds, speech by its characters, not tokens: 0.
 */
export function estimateInputTokens(request: CanonicalRequest): Promise<number> {
  switch (request.modality) {
    case 'chat': return estimatePromptTokens(request.body);
    case 'embeddings': return estimateEmbeddingsTokens(request.body);
    case 'rerank': return estimateRerankTokens(request.body);
    case 'transcription': case 'translation': case 'speech': case 'image': case 'video': return Promise.resolve(0);
  }
}

/** estimateInputTokens within the call, once the tokenizer is loaded; undefined before (then call estimateInputTokens). */
export function estimateInputTokensNow(request: CanonicalRequest): number | undefined {
  switch (request.modality) {
    case 'chat': return estimatePromptTokensNow(request.body);
    case 'embeddings': return estimateEmbeddingsTokensNow(request.body);
    case 'rerank': return estimateRerankTokensNow(request.body);
    case 'transcription': case 'translation': case 'speech': case 'image': case 'video': return 0;
  }
}

/**
 * The most seconds an audio file of this size can hold, for reservations before the call: at 32 kbit/s (speech
 * codecs such as Opus go lower only rarely), so the reservation is rarely short of the real duration.
 */
export const MAX_AUDIO_SECONDS_PER_BYTE = 1 / 4000;
export const estimateAudioSeconds = (bytes: number): number => Math.ceil(bytes * MAX_AUDIO_SECONDS_PER_BYTE);

export interface Metered {
  /** Tokens: as reported, or estimated (see `estimated`); null for a chat answer without usage. */
  usage: Usage | null;
  /** Rerank: the search units billed; 0 for every other modality. */
  searchUnits: number;
  /** Transcription and translation: seconds of audio heard; 0 for every other modality. */
  audioSeconds: number;
  /** Speech: the characters (code points) of the input spoken; 0 for every other modality. */
  characters: number;
  /** Image generation: the images made, and the size and quality they were asked at (their price depends on them). */
  images: number;
  imageSize?: string;
  imageQuality?: string;
  /** Video generation: seconds of video made (metered when the job completes, not by the request that starts it). */
  videoSeconds: number;
  /** The tokens are the gateway's estimate, not the provider's report. */
  estimated: boolean;
}

/**
 * What a complete answer used. A chat answer's usage is as the dispatcher left it (`reportedEstimated` says it
 * estimated it, as it does for embeddings and rerank answers that report no tokens). An embeddings answer that
 * still has none (a plugin answered it) is charged its input estimate: its whole input was read and nothing else
 * is generated. A rerank answer is its search units and whatever tokens it carries: counting 10 MB of documents
 * here again would cost every answer for the few that need it.
 */
export async function meteredResult(request: CanonicalRequest | undefined, result: CanonicalResult, reportedEstimated: boolean): Promise<Metered> {
  const answered = meteredAsAnswered(request, result, reportedEstimated);
  if (answered) return answered;
  const tokens = await estimateInputTokens(request!);
  return { usage: { prompt_tokens: tokens, completion_tokens: 0, total_tokens: tokens }, searchUnits: 0, estimated: true, audioSeconds: 0, characters: 0, images: 0, videoSeconds: 0 };
}

/**
 * meteredResult without counting anything: what the answer itself says it used, or null for the one case that
 * needs its input counted (an embeddings answer without usage). The access line and the metrics take this.
 */
export function meteredAsAnswered(request: CanonicalRequest | undefined, result: CanonicalResult, reportedEstimated: boolean): Metered | null {
  if (result.object === 'transcription') return meteredAudio(result.usage);
  const none = { audioSeconds: 0, characters: 0, images: 0, videoSeconds: 0 };
  if (result.object === 'speech') return { usage: null, searchUnits: 0, ...none, characters: tokenCount(result.usage.characters), estimated: false };
  if (result.object === 'image') return meteredImages(result.usage);
  // The job's seconds are metered when it completes (core/api/video.ts), not by the request that starts it.
  if (result.object === 'video.generation') return { usage: null, searchUnits: 0, estimated: false, ...none };
  const searchUnits = result.object === 'rerank' ? tokenCount(result.meta?.billed_units?.search_units) : 0;
  if (result.usage) return { usage: result.usage, searchUnits, estimated: reportedEstimated, ...none };
  if (request?.modality !== 'embeddings' || result.object !== 'list') return { usage: null, searchUnits, estimated: false, ...none };
  return null;
}

/** Tokens a non-token modality's provider reported, or null when it reported none. */
function reportedTokens(usage: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number }): Usage | null {
  const prompt = tokenCount(usage.prompt_tokens);
  const completion = tokenCount(usage.completion_tokens);
  return prompt + completion > 0 ? { prompt_tokens: prompt, completion_tokens: completion, total_tokens: tokenCount(usage.total_tokens) || prompt + completion } : null;
}

/** An audio answer: its seconds, and tokens only when the provider reported some. */
function meteredAudio(usage: AudioUsage): Metered {
  return { usage: reportedTokens(usage), searchUnits: 0, estimated: false, audioSeconds: audioSeconds(usage.audio_seconds), characters: 0, images: 0, videoSeconds: 0 };
}

/** An image answer: its count at the asked size and quality, and tokens only when the provider reported some. */
function meteredImages(usage: ImageUsage): Metered {
  return {
    usage: reportedTokens(usage), searchUnits: 0, estimated: false, audioSeconds: 0, characters: 0, videoSeconds: 0, images: tokenCount(usage.images),
    ...(usage.size ? { imageSize: usage.size } : {}), ...(usage.quality ? { imageQuality: usage.quality } : {}),
  };
}

/** Seconds of audio from a provider: finite, non-negative, to the millisecond. */
export function audioSeconds(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.round(value * 1000) / 1000 : 0;
}

/** What a metered answer is priced on (costUsd): its tokens, each a safe count, and the units of its modality. */
export function pricedUsage(metered: Metered): PricedUsage {
  const usage = metered.usage;
  return {
    prompt_tokens: tokenCount(usage?.prompt_tokens),
    completion_tokens: tokenCount(usage?.completion_tokens),
    prompt_tokens_details: { cached_tokens: tokenCount(usage?.prompt_tokens_details?.cached_tokens) },
    search_units: metered.searchUnits,
    audio_seconds: metered.audioSeconds,
    characters: metered.characters,
    images: metered.images,
    image_size: metered.imageSize,
    image_quality: metered.imageQuality,
  };
}

/** A token count from a provider: a non-negative safe integer, whatever the provider sent. */
export function tokenCount(value: unknown): number {
  const n = typeof value === 'number' && Number.isFinite(value) ? Math.round(value) : 0;
  return Math.min(Math.max(n, 0), Number.MAX_SAFE_INTEGER);
}
