/**
 * Together's video API lives under /v2 while its OpenAI-compatible base URL ends in /v1: POST /v2/videos {model,
 * prompt, seconds (a string), width, height, ratio, seed, negative_prompt, media: {frame_images}} answers the
 * job {id, status}; GET /v2/videos/{id} reads it: status queued | in_progress | completed | failed | cancelled,
 * outputs {video_url, cost} once completed, error {code, message} (or info.errors) once failed. A base URL that
 * does not end in /v1 (a proxy, a fake) takes the paths under it as they are, as Together's own SDK does.
 * The video URL is public (a signed link): the caller gets it as it is.
 */
import type { VideoRequest, VideoTaskState } from '../../../core/canonical/video.ts';
import type { ProviderTarget } from '../../../core/dispatch/provider.ts';
import {
  badVideoAnswer, count, errorText, jsonGet, jsonPost, record, sizeParts, text, videoRefused, type CompatibleVideo,
} from './shared.ts';

/** Text-to-video checkpoints (Wan-AI/Wan2.2-T2V-A14B) take no first frame. */
const TEXT_ONLY = /(^|[-_/])t2v([-_/.]|$)/i;

function videosUrl(target: ProviderTarget): string {
  const base = target.baseUrl.replace(/\/+$/, '');
  return /\/v1$/.test(base) ? `${base.slice(0, -'/v1'.length)}/v2/videos` : '/videos';
}

function body(request: VideoRequest, target: ProviderTarget): Record<string, unknown> {
  if (request.image !== undefined && TEXT_ONLY.test(target.upstreamModel)) {
    throw videoRefused(target, `a first frame (image) for ${target.upstreamModel}, a text-to-video model`, 'image');
  }
  const out: Record<string, unknown> = { model: target.upstreamModel, prompt: request.prompt };
  if (request.seconds !== undefined) out.seconds = String(request.seconds);
  if (request.size !== undefined) {
    const { width, height, ratio } = sizeParts(request.size);
    if (request.aspect_ratio !== undefined && request.aspect_ratio !== ratio) {
      throw videoRefused(target, `a size (${request.size}) of another aspect ratio than aspect_ratio ${request.aspect_ratio}`, 'aspect_ratio');
    }
    Object.assign(out, { width, height });
  } else if (request.aspect_ratio !== undefined) {
    out.ratio = request.aspect_ratio;
  }
  if (request.seed !== undefined) out.seed = request.seed;
  if (request.negative_prompt !== undefined) out.negative_prompt = request.negative_prompt;
  if (request.image !== undefined) out.media = { frame_images: [{ input_image: request.image, frame: 'first' }] };
  return out;
}

function stateOf(answer: unknown, target: ProviderTarget): VideoTaskState {
  const job = record(answer);
  switch (job.status) {
    case undefined:
    case 'queued':
      return { status: 'queued' };
    case 'in_progress':
      return { status: 'in_progress' };
    case 'completed': {
      const url = text(record(job.outputs).video_url);
      if (!url) throw badVideoAnswer(target, 'outputs.video_url');
      const seconds = count(job.seconds);
      return { status: 'completed', result: { url }, ...(seconds !== undefined ? { seconds } : {}) };
    }
    case 'failed':
    case 'cancelled': {
      const errors = record(job.info).errors;
      const reason = errorText(job.error) ?? (Array.isArray(errors) ? errors.map(errorText).filter(Boolean).join('; ') : errorText(errors));
      return { status: 'failed', error: reason || (job.status === 'cancelled' ? 'the job was cancelled' : 'no reason given') };
    }
    default:
      throw badVideoAnswer(target, `a known status (got ${JSON.stringify(job.status)})`);
  }
}

export const togetherVideo: CompatibleVideo = {
  translator: (headers) => ({
    create: (request, target) => jsonPost(headers, target, videosUrl(target), body(request, target)),
    created(answer, target) {
      const id = text(record(answer).id);
      if (!id) throw badVideoAnswer(target, 'an id');
      return { taskId: id, state: stateOf(answer, target) };
    },
    poll: (taskId, target) => jsonGet(headers, target, `${videosUrl(target)}/${encodeURIComponent(taskId)}`),
    state: (answer, target) => stateOf(answer, target),
  }),
};

