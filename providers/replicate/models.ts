/**
 * Replicate runs models with their own input schemas: the fields of the media models the gateway knows, by
 * owner/name (a version or deployment suffix aside). A model not listed is called with the shape of its family's
 * best-known model (flux for images, MiniMax speech, Veo for video); `modelInput` adds what a model needs beyond it.
 */
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import type { ReplicateOptions } from './input.ts';

/** owner/name of the upstream model: without `:version`; a bare version id or a deployment stays as it is. */
export function modelName(target: ProviderTarget): string {
  const name = target.upstreamModel.split(':', 1)[0]!;
  return name.startsWith('deployments/') ? name.slice('deployments/'.length) : name;
}

/** The operator's extra input for this upstream model (options.modelInput), under the translator's own fields. */
export function extraInput(target: ProviderTarget): Record<string, unknown> {
  const perModel = (target.options as ReplicateOptions).modelInput ?? {};
  return perModel[target.upstreamModel] ?? perModel[modelName(target)] ?? {};
}

export const refused = (target: ProviderTarget, what: string, capability: string) =>
  new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${target.slug} (model ${target.upstreamModel}) does not support ${what}`, { provider: target.slug, capability });

function profileOf<P>(table: ReadonlyArray<readonly [string, P]>, fallback: P, target: ProviderTarget): P {
  const name = modelName(target);
  return table.find(([prefix]) => name === prefix || name.startsWith(prefix))?.[1] ?? fallback;
}

export interface ImageProfile {
  /** Images one prediction makes (num_outputs up to this); 1: the model has no num_outputs. */
  maxOutputs: number;
  aspectRatios: readonly string[];
}

const FLUX_RATIOS = ['1:1', '16:9', '21:9', '3:2', '2:3', '4:5', '5:4', '3:4', '4:3', '9:16', '9:21'] as const;
const FLUX_PRO_RATIOS = ['1:1', '16:9', '3:2', '2:3', '4:5', '5:4', '9:16', '3:4', '4:3'] as const;
const FLUX: ImageProfile = { maxOutputs: 4, aspectRatios: FLUX_RATIOS };

const IMAGE_MODELS: ReadonlyArray<readonly [string, ImageProfile]> = [
  ['black-forest-labs/flux-schnell', FLUX],
  ['black-forest-labs/flux-dev', FLUX],
  ['black-forest-labs/flux-1.1-pro', { maxOutputs: 1, aspectRatios: FLUX_PRO_RATIOS }],
  ['black-forest-labs/flux-pro', { maxOutputs: 1, aspectRatios: FLUX_PRO_RATIOS }],
];

export const imageProfile = (target: ProviderTarget): ImageProfile => profileOf(IMAGE_MODELS, FLUX, target);

export interface SpeechProfile {
  voiceField: string;
  formatField: string;
  formats: readonly string[];
  speed: readonly [number, number];
}

const MINIMAX_SPEECH: SpeechProfile = { voiceField: 'voice_id', formatField: 'audio_format', formats: ['mp3', 'wav', 'flac', 'pcm'], speed: [0.5, 2] };

export const speechProfile = (target: ProviderTarget): SpeechProfile => profileOf([['minimax/speech-', MINIMAX_SPEECH]], MINIMAX_SPEECH, target);

export interface VideoProfile {
  /** The first-frame image's field. */
  imageField: string;
  /** Takes `duration` in seconds; else the model makes `fixedSeconds` of video. */
  duration: boolean;
  fixedSeconds?: number;
  /** The aspect ratios it takes (`aspect_ratio`); none: it takes no ratio. */
  aspectRatios: readonly string[];
  /** The resolutions it takes (`resolution`, e.g. 720p): the short side of the size asked. */
  resolutions: readonly string[];
  negativePrompt: boolean;
  seed: boolean;
}

const VEO: VideoProfile = { imageField: 'image', duration: true, aspectRatios: ['16:9', '9:16'], resolutions: ['720p', '1080p'], negativePrompt: true, seed: true };

const VIDEO_MODELS: ReadonlyArray<readonly [string, VideoProfile]> = [
  ['google/veo-', VEO],
  ['kwaivgi/kling-', { imageField: 'start_image', duration: true, aspectRatios: ['16:9', '9:16', '1:1'], resolutions: [], negativePrompt: true, seed: false }],
  ['minimax/video-01', { imageField: 'first_frame_image', duration: false, fixedSeconds: 6, aspectRatios: [], resolutions: [], negativePrompt: false, seed: false }],
];

export const videoProfile = (target: ProviderTarget): VideoProfile => profileOf(VIDEO_MODELS, VEO, target);

/** WIDTHxHEIGHT -> the listed ratio nearest to it, when one is within 5%; undefined for a size that is not one. */
export function nearestRatio(size: string, ratios: readonly string[]): string | undefined {
  const match = /^(\d+)x(\d+)$/.exec(size);
  if (!match || Number(match[1]) === 0 || Number(match[2]) === 0) return undefined;
  const wanted = Math.log(Number(match[1]) / Number(match[2]));
  let best: { ratio: string; distance: number } | undefined;
  for (const ratio of ratios) {
    const [w, h] = ratio.split(':').map(Number) as [number, number];
    const distance = Math.abs(Math.log(w / h) - wanted);
    if (!best || distance < best.distance) best = { ratio, distance };
  }
  return best && best.distance <= Math.log(1.05) ? best.ratio : undefined;
}
