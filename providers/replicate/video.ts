/**
 * Video generation on Replicate (Veo: {prompt, duration, aspect_ratio, resolution, image, negative_prompt, seed};
 * Kling: {prompt, duration, aspect_ratio, start_image, negative_prompt}; MiniMax video-01: {prompt,
 * first_frame_image}, six seconds): the job is a prediction, created without holding the request, read at
 * GET /predictions/{id} by the job runner. Its output is the video's URL on Replicate's delivery host, which
 * anyone holding it may fetch. What the model cannot do (a length, a ratio, a negative prompt) is refused at
 * creation rather than dropped.
 */
import type { VideoRequest, VideoTaskState } from '../../core/canonical/video.ts';
import type { ProviderTarget, VideoTranslator } from '../../core/dispatch/provider.ts';
import { logProgress, mediaPrediction, outputUrls } from './media.ts';
import { nearestRatio, refused, videoProfile } from './models.ts';
import { asPrediction, bearer, malformed } from './predictions.ts';

function shortSide(size: string): number | undefined {
  const match = /^(\d+)x(\d+)$/.exec(size);
  return match ? Math.min(Number(match[1]), Number(match[2])) : undefined;
}

export function videoInput(request: VideoRequest, target: ProviderTarget): Record<string, unknown> {
  const profile = videoProfile(target);
  const input: Record<string, unknown> = { prompt: request.prompt };
  if (request.seconds !== undefined) {
    if (profile.duration) input.duration = request.seconds;
    else if (request.seconds !== profile.fixedSeconds) throw refused(target, `${request.seconds} seconds of video (it makes ${profile.fixedSeconds ?? 'a fixed length'})`, 'seconds');
  }
  const ratio = request.aspect_ratio ?? (request.size !== undefined ? nearestRatio(request.size, profile.aspectRatios) : undefined);
  if (request.aspect_ratio !== undefined || request.size !== undefined) {
    if (ratio === undefined || !profile.aspectRatios.includes(ratio)) {
      throw refused(target, `the ${request.aspect_ratio !== undefined ? `aspect ratio ${request.aspect_ratio}` : `size ${request.size}`} (${profile.aspectRatios.length > 0 ? `it takes ${profile.aspectRatios.join(', ')}` : 'it takes no ratio'})`, 'aspect_ratio');
    }
    input.aspect_ratio = ratio;
  }
  if (request.size !== undefined && profile.resolutions.length > 0) {
    const resolution = `${shortSide(request.size)}p`;
    if (!profile.resolutions.includes(resolution)) throw refused(target, `size ${request.size} (its resolutions are ${profile.resolutions.join(', ')})`, 'size');
    input.resolution = resolution;
  }
  if (request.image !== undefined) input[profile.imageField] = request.image;
  if (request.negative_prompt !== undefined) {
    if (!profile.negativePrompt) throw refused(target, 'negative_prompt', 'negative_prompt');
    input.negative_prompt = request.negative_prompt;
  }
  if (request.seed !== undefined) {
    if (!profile.seed) throw refused(target, 'seed', 'seed');
    input.seed = request.seed;
  }
  return input;
}

function reason(error: unknown, status: string): string {
  if (typeof error === 'string' && error !== '') return error;
  if (error !== null && error !== undefined) return JSON.stringify(error);
  return status === 'failed' ? 'the prediction failed without a reason' : `the prediction was ${status}`;
}

export function videoState(body: unknown, target: ProviderTarget): VideoTaskState {
  const p = asPrediction(body, target);
  const progress = logProgress(p);
  switch (p.status) {
    case 'starting': return { status: 'queued', ...(progress !== undefined ? { progress } : {}) };
    case 'processing': return { status: 'in_progress', ...(progress !== undefined ? { progress } : {}) };
    case 'succeeded': {
      const [url, ...more] = outputUrls(p, target);
      if (more.length > 0) throw malformed(target, 'video prediction output (several files)');
      const fixed = videoProfile(target).fixedSeconds;
      return { status: 'completed', progress: 100, result: { url: url! }, ...(fixed !== undefined ? { seconds: fixed } : {}) };
    }
    default: return { status: 'failed', error: reason(p.error, p.status) };
  }
}

export const replicateVideo: VideoTranslator = {
  create: (request, target) => mediaPrediction(target, videoInput(request, target), false),
  created(body, target) {
    const p = asPrediction(body, target);
    if (typeof p.id !== 'string' || p.id === '') throw malformed(target, 'prediction (no id)');
    return { taskId: p.id, state: videoState(p, target) };
  },
  poll: (taskId, target) => ({
    method: 'GET', path: `/predictions/${encodeURIComponent(taskId)}`, headers: { ...target.headers, accept: 'application/json', ...bearer(target) },
  }),
  state: (body, target) => videoState(body, target),
};
