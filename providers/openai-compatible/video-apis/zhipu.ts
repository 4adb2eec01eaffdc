/**
 * Zhipu's video API: POST /videos/generations {model, prompt, image_url (a URL or base64), size, duration, fps,
 * quality, with_audio} answers {id, request_id, task_status: PROCESSING}; GET /async-result/{id} reads the task:
 * task_status PROCESSING | SUCCESS | FAIL, and video_result [{url, cover_image_url}] once it succeeded.
 *
 * CogVideoX makes 5 or 10 seconds at the sizes its model lists (a ratio is sent as the size of that ratio), and
 * the Vidu models take aspect_ratio themselves; no model has a seed or a negative prompt. Vidu's text models
 * (viduq1-text) take no first frame. What a model lacks is refused here; what is within reach goes as asked
 * and Zhipu checks the rest per model.
 */
import type { VideoRequest, VideoTaskState } from '../../../core/canonical/video.ts';
import type { ProviderTarget } from '../../../core/dispatch/provider.ts';
import {
  badVideoAnswer, checkSeconds, errorText, jsonGet, jsonPost, record, refuseFields, sizeParts, text, videoRefused, type CompatibleVideo,
} from './shared.ts';

const COGVIDEOX_3_SIZES = ['1280x720', '720x1280', '1024x1024', '1920x1080', '1080x1920', '2048x1080', '3840x2160'];
/** cogvideox, cogvideox-2 and cogvideox-flash. */
const COGVIDEOX_SIZES = ['720x480', '1024x1024', '1280x960', '960x1280', '1920x1080', '1080x1920', '2048x1080', '3840x2160'];
const SIZE_OF_RATIO: Record<string, string> = { '16:9': '1920x1080', '9:16': '1080x1920', '1:1': '1024x1024' };

function cogvideoxSize(request: VideoRequest, target: ProviderTarget, sizes: readonly string[]): string | undefined {
  const { size, aspect_ratio: ratio } = request;
  if (size !== undefined) {
    if (!sizes.includes(size)) throw videoRefused(target, `the video size ${size} on ${target.upstreamModel} (${sizes.join(', ')})`, 'size');
    if (ratio !== undefined && sizeParts(size).ratio !== ratio) throw videoRefused(target, `a size (${size}) of another aspect ratio than aspect_ratio ${ratio}`, 'aspect_ratio');
    return size;
  }
  if (ratio === undefined) return undefined;
  const sized = SIZE_OF_RATIO[ratio];
  if (!sized || !sizes.includes(sized)) throw videoRefused(target, `the aspect ratio ${ratio} on ${target.upstreamModel} (16:9, 9:16 or 1:1, or name a size)`, 'aspect_ratio');
  return sized;
}

function body(request: VideoRequest, target: ProviderTarget): Record<string, unknown> {
  const model = target.upstreamModel;
  refuseFields(request, target, ['negative_prompt', 'seed'], model);
  const out: Record<string, unknown> = { model, prompt: request.prompt };
  if (/^cogvideox/i.test(model)) {
    const seconds = checkSeconds(request, target, (s) => s === 5 || s === 10, '5 or 10');
    if (seconds !== undefined) out.duration = seconds;
    const size = cogvideoxSize(request, target, /^cogvideox-3/i.test(model) ? COGVIDEOX_3_SIZES : COGVIDEOX_SIZES);
    if (size !== undefined) out.size = size;
  } else {
    if (/-text\b/i.test(model) && request.image !== undefined) throw videoRefused(target, `a first frame (image) for ${model}, a text-to-video model`, 'image');
    if (request.seconds !== undefined) out.duration = request.seconds;
    if (request.size !== undefined) out.size = request.size;
    if (request.aspect_ratio !== undefined) out.aspect_ratio = request.aspect_ratio;
  }
  if (request.image !== undefined) out.image_url = request.image;
  return out;
}

function stateOf(answer: unknown, target: ProviderTarget): VideoTaskState {
  const task = record(answer);
  switch (task.task_status) {
    case 'PROCESSING':
      return { status: 'in_progress' };
    case 'SUCCESS': {
      const first = Array.isArray(task.video_result) ? record(task.video_result[0]) : {};
      const url = text(first.url);
      if (!url) throw badVideoAnswer(target, 'video_result[0].url');
      return { status: 'completed', result: { url, contentType: 'video/mp4' } };
    }
    case 'FAIL':
      return { status: 'failed', error: errorText(task.error) ?? errorText(task.message) ?? 'no reason given' };
    default:
      throw badVideoAnswer(target, `a known task_status (got ${JSON.stringify(task.task_status)})`);
  }
}

export const zhipuVideo: CompatibleVideo = {
  translator: (headers) => ({
    create: (request, target) => jsonPost(headers, target, '/videos/generations', body(request, target)),
    created(answer, target) {
      const id = text(record(answer).id);
      if (!id) throw badVideoAnswer(target, 'an id');
      // Every task is PROCESSING from its creation, waiting or not: a new one is queued until a poll says more.
      const state = stateOf({ task_status: 'PROCESSING', ...record(answer) }, target);
      return { taskId: id, state: state.status === 'in_progress' ? { status: 'queued' } : state };
    },
    poll: (taskId, target) => jsonGet(headers, target, `/async-result/${encodeURIComponent(taskId)}`),
    state: (answer, target) => stateOf(answer, target),
  }),
};
