/**
 * Volcengine Ark's video tasks (Seedance): POST /contents/generations/tasks {model, content: [{type: text, text:
 * "<prompt> --ratio 16:9 --duration 5 --resolution 720p --seed 7"}, {type: image_url, image_url: {url}}]} answers
 * {id}; GET /contents/generations/tasks/{id} reads it: status queued | running | succeeded | failed | cancelled |
 * expired, content {video_url} once succeeded, with the duration made, and error {code, message} once failed.
 * The parameters travel as the text's commands, which every Seedance model reads. Seedance has no negative
 * prompt, its text-to-video models (-t2v) no first frame, and it makes 2 to 12 seconds at 480p, 720p or 1080p in
 * its ratios, a size naming one of its frames (1248x704 is 720p at 16:9); anything else is refused here.
 */
import type { VideoRequest, VideoTaskState } from '../../../core/canonical/video.ts';
import type { ProviderTarget } from '../../../core/dispatch/provider.ts';
import {
  badVideoAnswer, checkSeconds, count, errorText, jsonGet, frames, jsonPost, record, refuseFields, text, videoRefused,
  type CompatibleVideo,
} from './shared.ts';

const RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9'];
/** Seedance's frames: its pixels are rounded to its encoder's blocks (16:9 at 720p is 1248x704, not 1280x720). */
const FRAMES = frames([
  ['480p', '16:9', 864, 480], ['480p', '4:3', 736, 544], ['480p', '1:1', 640, 640], ['480p', '3:4', 544, 736], ['480p', '9:16', 480, 864], ['480p', '21:9', 960, 416],
  ['720p', '16:9', 1248, 704], ['720p', '4:3', 1120, 832], ['720p', '1:1', 960, 960], ['720p', '3:4', 832, 1120], ['720p', '9:16', 704, 1248], ['720p', '21:9', 1504, 640],
  ['1080p', '16:9', 1920, 1088], ['1080p', '4:3', 1664, 1248], ['1080p', '1:1', 1440, 1440], ['1080p', '3:4', 1248, 1664], ['1080p', '9:16', 1088, 1920], ['1080p', '21:9', 2176, 928],
]);
const TEXT_ONLY = /-t2v(-|$)/i;

function commands(request: VideoRequest, target: ProviderTarget): string[] {
  const out: string[] = [];
  let ratio = request.aspect_ratio;
  if (ratio !== undefined && !RATIOS.includes(ratio)) throw videoRefused(target, `the aspect ratio ${ratio} (${RATIOS.join(', ')})`, 'aspect_ratio');
  if (request.size !== undefined) {
    const frame = FRAMES.get(request.size);
    if (!frame) throw videoRefused(target, `the video size ${request.size} (Seedance's frames: ${[...FRAMES.keys()].join(', ')}; or an aspect_ratio)`, 'size');
    if (ratio !== undefined && ratio !== frame[0]) throw videoRefused(target, `a size (${request.size}) of another aspect ratio than aspect_ratio ${ratio}`, 'aspect_ratio');
    ratio = frame[0];
    out.push(`--resolution ${frame[1]}`);
  }
  if (ratio !== undefined) out.unshift(`--ratio ${ratio}`);
  const seconds = checkSeconds(request, target, (s) => s >= 2 && s <= 12, '2 to 12');
  if (seconds !== undefined) out.push(`--duration ${seconds}`);
  if (request.seed !== undefined) out.push(`--seed ${request.seed}`);
  return out;
}

function body(request: VideoRequest, target: ProviderTarget): Record<string, unknown> {
  refuseFields(request, target, ['negative_prompt']);
  if (TEXT_ONLY.test(target.upstreamModel) && request.image !== undefined) {
    throw videoRefused(target, `a first frame (image) for ${target.upstreamModel}, a text-to-video model`, 'image');
  }
  const content: Array<Record<string, unknown>> = [{ type: 'text', text: [request.prompt, ...commands(request, target)].join(' ') }];
  if (request.image !== undefined) content.push({ type: 'image_url', image_url: { url: request.image } });
  return { model: target.upstreamModel, content };
}

function stateOf(answer: unknown, target: ProviderTarget): VideoTaskState {
  const task = record(answer);
  switch (task.status) {
    case 'queued':
      return { status: 'queued' };
    case 'running':
      return { status: 'in_progress' };
    case 'succeeded': {
      const url = text(record(task.content).video_url);
      if (!url) throw badVideoAnswer(target, 'content.video_url');
      const seconds = count(task.duration);
      return { status: 'completed', result: { url, contentType: 'video/mp4' }, ...(seconds !== undefined ? { seconds } : {}) };
    }
    case 'failed':
      return { status: 'failed', error: errorText(task.error) ?? 'no reason given' };
    case 'cancelled':
      return { status: 'failed', error: 'the task was cancelled' };
    case 'expired':
      return { status: 'failed', error: 'the task expired before the video was made' };
    default:
      throw badVideoAnswer(target, `a known status (got ${JSON.stringify(task.status)})`);
  }
}

export const volcengineVideo: CompatibleVideo = {
  translator: (headers) => ({
    create: (request, target) => jsonPost(headers, target, '/contents/generations/tasks', body(request, target)),
    created(answer, target) {
      const id = text(record(answer).id);
      if (!id) throw badVideoAnswer(target, 'an id');
      return { taskId: id, state: { status: 'queued' } };
    },
    poll: (taskId, target) => jsonGet(headers, target, `/contents/generations/tasks/${encodeURIComponent(taskId)}`),
    state: (answer, target) => stateOf(answer, target),
  }),
};
