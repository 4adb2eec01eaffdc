/**
 * Runway video generation: POST /image_to_video `{model, promptImage, promptText, ratio, duration, seed}` when the
 * request has a first frame, else POST /text_to_video for the models Runway lets start from text alone; the task
 * is then read at GET /tasks/{id} by the job runner. A SUCCEEDED task's `output` URLs are public (for a day or
 * two): the caller gets the first as it is.
 *
 * What each known model takes (Runway's API reference): gen4_turbo and gen3a_turbo need a first frame; gen4.5,
 * veo3, veo3.1 and veo3.1_fast also start from text. `size` must be one of the model's resolutions (sent as
 * `W:H`); an `aspect_ratio` picks the resolution closest to it; neither, the model's first (landscape). Without
 * `seconds` the model's shortest length is asked for explicitly. A model not in the table gets the request as
 * it is, for Runway to judge.
 *
 * Runway's task answers do not say how long the video is, so the length sent on create travels with the task id
 * (`<id>#<seconds>`, the id the job keeps): the completed state reports it, and the job is billed by what was
 * made even when the caller asked no length.
 */
import type { VideoRequest, VideoTaskState } from '../../core/canonical/video.ts';
import type { ProviderTarget, VideoTranslator } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { asTask, createdId, createTask, failureOf, percent, pixelRatio, readTask } from './tasks.ts';

interface VideoModel {
  /** Whether the model can start from text alone (POST /text_to_video). */
  text: boolean;
  ratios: readonly string[];
  durations: readonly number[];
  seed: boolean;
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const VEO31: VideoModel = { text: true, ratios: ['1280:720', '720:1280', '1920:1080', '1080:1920'], durations: [4, 6, 8], seed: false };

export const VIDEO_MODELS: Record<string, VideoModel> = {
  gen4_turbo: { text: false, ratios: ['1280:720', '720:1280', '1104:832', '832:1104', '960:960', '1584:672'], durations: [5, 10], seed: true },
  gen3a_turbo: { text: false, ratios: ['1280:768', '768:1280'], durations: [5, 10], seed: true },
  'gen4.5': { text: true, ratios: ['1280:720', '720:1280'], durations: range(2, 10), seed: true },
  veo3: { text: true, ratios: ['1280:720', '720:1280'], durations: [8], seed: false },
  'veo3.1': VEO31,
  'veo3.1_fast': VEO31,
};

const invalid = (path: string, message: string) => new GatewayError('VALIDATION_ERROR', message, [{ path, message }]);
/** A value the model cannot take: refused, never rounded (the model's next target, if any, is tried). */
const refused = (target: ProviderTarget, parameter: string, message: string) =>
  new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${target.slug}: ${message}`, { provider: target.slug, parameters: [parameter] });

const quotient = (ratio: string) => {
  const [w, h] = ratio.split(':').map(Number) as [number, number];
  return w / h;
};

function ratioOf(request: VideoRequest, model: VideoModel | undefined, target: ProviderTarget): string | undefined {
  const name = target.upstreamModel;
  if (request.size !== undefined) {
    const ratio = pixelRatio(request.size);
    if (!ratio) throw invalid('/size', `size must be WIDTHxHEIGHT, got "${request.size}"`);
    if (model && !model.ratios.includes(ratio)) throw refused(target, 'size', `size ${request.size} is not one ${name} makes (${model.ratios.map((r) => r.replace(':', 'x')).join(', ')})`);
    return ratio;
  }
  if (request.aspect_ratio !== undefined) {
    if (!/^\d+:\d+$/.test(request.aspect_ratio) || quotient(request.aspect_ratio) === 0) throw invalid('/aspect_ratio', `aspect_ratio must be W:H, got "${request.aspect_ratio}"`);
    if (!model) return undefined;
    const wanted = quotient(request.aspect_ratio);
    const [closest] = [...model.ratios].sort((a, b) => Math.abs(quotient(a) - wanted) - Math.abs(quotient(b) - wanted));
    // gen3a_turbo's 5:3 is the nearest it comes to 16:9; nothing it makes is near 1:1.
    if (!closest || Math.abs(quotient(closest) - wanted) / wanted > 0.07) throw refused(target, 'aspect_ratio', `${name} makes no video near ${request.aspect_ratio} (${model.ratios.join(', ')})`);
    return closest;
  }
  return model?.ratios[0];
}

function durationOf(request: VideoRequest, model: VideoModel | undefined, target: ProviderTarget): number | undefined {
  if (request.seconds === undefined) return model ? Math.min(...model.durations) : undefined;
  if (model && !model.durations.includes(request.seconds)) throw refused(target, 'seconds', `${target.upstreamModel} makes videos of ${model.durations.join(', ')} seconds, not ${request.seconds}`);
  return request.seconds;
}

export function runwayVideoBody(request: VideoRequest, target: ProviderTarget): { path: string; body: Record<string, unknown> } {
  const name = target.upstreamModel;
  const model = VIDEO_MODELS[name];
  if (request.negative_prompt !== undefined) throw refused(target, 'negative_prompt', 'Runway takes no negative prompt');
  if (request.image === undefined && model && !model.text) throw refused(target, 'image', `${name} makes video from an image: give the first frame as image (an https URL or a data: URI)`);
  if (request.seed !== undefined && model && !model.seed) throw refused(target, 'seed', `${name} takes no seed`);
  const ratio = ratioOf(request, model, target);
  const duration = durationOf(request, model, target);
  const body: Record<string, unknown> = {
    model: name,
    ...(request.image !== undefined ? { promptImage: request.image } : {}),
    promptText: request.prompt,
    ...(ratio !== undefined ? { ratio } : {}),
    ...(duration !== undefined ? { duration } : {}),
    ...(request.seed !== undefined ? { seed: request.seed } : {}),
  };
  return { path: request.image !== undefined ? '/image_to_video' : '/text_to_video', body };
}

/** The job's task reference: Runway's task id, and the length asked of it when one was. */
export function taskRef(id: string, seconds: unknown): string {
  return typeof seconds === 'number' ? `${id}#${seconds}` : id;
}

export function parseTaskRef(ref: string): { id: string; seconds?: number } {
  const match = /^(.*)#(\d+)$/.exec(ref);
  return match ? { id: match[1]!, seconds: Number(match[2]) } : { id: ref };
}

/** A task read from Runway -> the job's state; `seconds` is the length asked on create. */
export function videoState(body: unknown, target: ProviderTarget, seconds?: number): VideoTaskState {
  const task = asTask(body, target);
  switch (task.status) {
    case 'PENDING':
    case 'THROTTLED': return { status: 'queued', progress: 0 };
    case 'RUNNING': return { status: 'in_progress', progress: percent(task) ?? 0 };
    case 'SUCCEEDED': {
      const url = Array.isArray(task.output) ? task.output.find((u): u is string => typeof u === 'string' && u !== '') : undefined;
      if (!url) return { status: 'failed', error: 'Runway reported the task SUCCEEDED without an output URL' };
      return { status: 'completed', progress: 100, result: { url, contentType: 'video/mp4' }, ...(seconds !== undefined ? { seconds } : {}) };
    }
    case 'FAILED':
    case 'CANCELLED': return { status: 'failed', error: failureOf(task) };
  }
}

export const runwayVideo: VideoTranslator = {
  create(request, target) {
    const { path, body } = runwayVideoBody(request, target);
    return createTask(target, path, body);
  },
  created(body, target, request) {
    // The length create sent, which runwayVideoBody decides again the same way.
    const { body: sent } = runwayVideoBody(request, target);
    return { taskId: taskRef(createdId(body, target), sent.duration), state: { status: 'queued', progress: 0 } };
  },
  poll: (taskId, target) => readTask(parseTaskRef(taskId).id, target),
  state: (body, target, taskId) => videoState(body, target, parseTaskRef(taskId).seconds),
};
