/**
 * xAI's video API (grok-imagine-video) is deferred: POST /videos/generations {model, prompt, duration (1 to 15),
 * aspect_ratio, resolution (480p | 720p: a frame's short side), image: {url}} answers {request_id}; GET /videos/{request_id} reads it:
 * status pending | done | failed | expired, video {url, duration, respect_moderation} once done, progress, error
 * {code, message}. A pending request may answer 202 with no body at all. The API has no seed or negative prompt,
 * and no sizes beyond its ratios at 480p or 720p: those are refused rather than sent and ignored.
 */
import type { VideoRequest, VideoTaskState } from '../../../core/canonical/video.ts';
import type { ProviderTarget } from '../../../core/dispatch/provider.ts';
import {
  badVideoAnswer, checkSeconds, count, errorText, jsonGet, frames, jsonPost, record, refuseFields, text, videoRefused,
  type CompatibleVideo,
} from './shared.ts';

const RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4', '3:2', '2:3'];
/** The frames of each ratio at 480p and 720p, named by their short side as xAI names its resolutions. */
const FRAMES = frames([
  ['720p', '16:9', 1280, 720], ['720p', '9:16', 720, 1280], ['720p', '1:1', 720, 720], ['720p', '4:3', 960, 720], ['720p', '3:4', 720, 960],
  ['720p', '3:2', 1080, 720], ['720p', '2:3', 720, 1080],
  ['480p', '16:9', 854, 480], ['480p', '9:16', 480, 854], ['480p', '1:1', 480, 480], ['480p', '4:3', 640, 480], ['480p', '3:4', 480, 640],
  ['480p', '3:2', 720, 480], ['480p', '2:3', 480, 720],
]);

function body(request: VideoRequest, target: ProviderTarget): Record<string, unknown> {
  refuseFields(request, target, ['negative_prompt', 'seed']);
  const out: Record<string, unknown> = { model: target.upstreamModel, prompt: request.prompt };
  const seconds = checkSeconds(request, target, (s) => s >= 1 && s <= 15, '1 to 15');
  if (seconds !== undefined) out.duration = seconds;
  let ratio = request.aspect_ratio;
  if (ratio !== undefined && !RATIOS.includes(ratio)) throw videoRefused(target, `the aspect ratio ${ratio} (${RATIOS.join(', ')})`, 'aspect_ratio');
  if (request.size !== undefined) {
    const frame = FRAMES.get(request.size);
    if (!frame) throw videoRefused(target, `the video size ${request.size} (${[...FRAMES.keys()].join(', ')}, or an aspect_ratio)`, 'size');
    if (ratio !== undefined && ratio !== frame[0]) throw videoRefused(target, `a size (${request.size}) of another aspect ratio than aspect_ratio ${ratio}`, 'aspect_ratio');
    [ratio, out.resolution] = frame;
  }
  if (ratio !== undefined) out.aspect_ratio = ratio;
  if (request.image !== undefined) out.image = { url: request.image };
  return out;
}

function stateOf(answer: unknown, target: ProviderTarget): VideoTaskState {
  const task = record(answer);
  const progress = count(task.progress);
  const withProgress = progress !== undefined ? { progress } : {};
  switch (task.status) {
    // No body (a 202) is a request still pending.
    case undefined:
    case 'pending':
      return { status: progress ? 'in_progress' : 'queued', ...withProgress };
    case 'done': {
      const video = record(task.video);
      if (video.respect_moderation === false) return { status: 'failed', error: 'the video was withheld by xAI\'s content moderation' };
      const url = text(video.url);
      if (!url) throw badVideoAnswer(target, 'video.url');
      const seconds = count(video.duration);
      return { status: 'completed', result: { url, contentType: 'video/mp4' }, ...(seconds !== undefined ? { seconds } : {}) };
    }
    case 'expired':
      return { status: 'failed', error: errorText(task.error) ?? 'the request expired before the video was made' };
    case 'failed':
      return { status: 'failed', error: errorText(task.error) ?? 'no reason given' };
    default:
      throw badVideoAnswer(target, `a known status (got ${JSON.stringify(task.status)})`);
  }
}

export const xaiVideo: CompatibleVideo = {
  translator: (headers) => ({
    create: (request, target) => jsonPost(headers, target, '/videos/generations', body(request, target)),
    created(answer, target) {
      const id = text(record(answer).request_id);
      if (!id) throw badVideoAnswer(target, 'a request_id');
      return { taskId: id, state: { status: 'queued' } };
    },
    poll: (taskId, target) => jsonGet(headers, target, `/videos/${encodeURIComponent(taskId)}`),
    state: (answer, target) => stateOf(answer, target),
  }),
};
