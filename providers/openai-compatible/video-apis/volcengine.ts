/**
 * Volcengine Ark's video tasks (Seedance): POST /contents/generations/tasks {model, content: [{type: text, text:
 * "<prompt> --ratio 16:9 --duration 5 --resolution 720p --seed 7"}, {type: image_url, image_url: {url}}]} answers
 * {id}; GET /contents/generations/tasks/{id} reads it: status queued | running | succeeded | failed | cancelled |
 * expired, content {video_url} once succeeded, with the duration made, and error {code, message} once failed.
 * The parameters travel as the text's commands, which every Seedance model reads. Seedance has no negative
 * prompt, its text-to-video models (-t2v) no first frame, and it makes 2 to 12 seconds at 480p, 720p or 1080p in
 * its ratios (a size names them by its pixel count and shape: 864x480 and 854x480 are both 480p at 16:9);
 * anything else is refused here.
 */
import type { VideoRequest, VideoTaskState } from '../../../core/canonical/video.ts';
import type { ProviderTarget } from '../../../core/dispatch/provider.ts';
import {
  badVideoAnswer, checkSeconds, count, errorText, jsonGet, jsonPost, nearRatio, nearResolution, record, refuseFields, sizeParts, text, videoRefused,
  type CompatibleVideo,
} from './shared.ts';

const RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9'];
const RESOLUTIONS: Record<number, string> = { 480: '480p', 720: '720p', 1080: '1080p' };
const TEXT_ONLY = /-t2v(-|$)/i;

function commands(request: VideoRequest, target: ProviderTarget): string[] {
  const out: string[] = [];
  let ratio = request.aspect_ratio;
  if (ratio !== undefined && !RATIOS.includes(ratio)) throw videoRefused(target, `the aspect ratio ${ratio} (${RATIOS.join(', ')})`, 'aspect_ratio');
  if (request.size !== undefined) {
    const { width, height } = sizeParts(request.size);
    const sized = nearRatio(width, height, RATIOS);
    const short = nearResolution(width, height, Object.keys(RESOLUTIONS).map(Number));
    const resolution = short === undefined ? undefined : RESOLUTIONS[short];
    if (!sized || !resolution) throw videoRefused(target, `the video size ${request.size} (480p, 720p or 1080p at ${RATIOS.join(', ')})`, 'size');
    if (ratio !== undefined && ratio !== sized) throw videoRefused(target, `a size (${request.size}) of another aspect ratio than aspect_ratio ${ratio}`, 'aspect_ratio');
    ratio = sized;
    out.push(`--resolution ${resolution}`);
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
