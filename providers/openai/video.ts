/**
 * Video generation on OpenAI's video API (Sora): POST /videos {model, prompt, seconds, size} starts a job and
 * answers the video object {id, object: "video", status: queued | in_progress | completed | failed, progress,
 * seconds, size, error}; GET /videos/{id} reads it; GET /videos/{id}/content is the MP4, which needs the API key,
 * so the gateway downloads it for the caller. `seconds` goes as a string, and only the lengths the API takes
 * (4, 8, 12) are sent: any other is refused rather than rounded. OpenAI takes a size, not a ratio: 16:9 and 9:16
 * become 1280x720 and 720x1280. A first frame must be a multipart upload (input_reference), and the API has no
 * negative prompt or seed: a request asking for them is refused, never sent without them.
 */
import type { VideoRequest, VideoStatus, VideoTaskState } from '../../core/canonical/video.ts';
import { unsupported } from '../../core/dispatch/exchange.ts';
import type { ProviderTarget, UpstreamRequest, VideoTranslator } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { openaiHeaders } from './chat.ts';

const SECONDS = [4, 8, 12];
const SIZE_OF_RATIO: Record<string, string> = { '16:9': '1280x720', '9:16': '720x1280' };
const STATUSES: readonly VideoStatus[] = ['queued', 'in_progress', 'completed', 'failed'];

interface OpenAiVideo {
  id?: unknown;
  status?: unknown;
  progress?: unknown;
  seconds?: unknown;
  error?: { code?: unknown; message?: unknown } | null;
}

const refuse = (what: string, parameter: string) => unsupported('openai', what, { parameter });

function ratioOf(size: string): string {
  const [w, h] = size.split('x').map(Number) as [number, number];
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const d = gcd(w, h);
  return `${w / d}:${h / d}`;
}

function sizeFor(request: VideoRequest): string | undefined {
  if (request.aspect_ratio === undefined) return request.size;
  if (request.size !== undefined) {
    if (ratioOf(request.size) !== request.aspect_ratio) throw refuse(`a size (${request.size}) of another aspect ratio than aspect_ratio ${request.aspect_ratio}`, 'aspect_ratio');
    return request.size;
  }
  const size = SIZE_OF_RATIO[request.aspect_ratio];
  if (!size) throw refuse(`the aspect ratio ${request.aspect_ratio} (16:9 or 9:16, or name a size)`, 'aspect_ratio');
  return size;
}

function headers(target: ProviderTarget): Record<string, string> {
  const { 'content-type': _json, ...rest } = openaiHeaders(target);
  return rest;
}

function parsed(body: unknown, taskId?: string): OpenAiVideo & { id: string } {
  const video = (body && typeof body === 'object' ? body : {}) as OpenAiVideo;
  const id = typeof video.id === 'string' && video.id !== '' ? video.id : taskId;
  if (!id) throw new GatewayError('UPSTREAM_ERROR', 'openai returned a video without an id', { provider: 'openai' });
  return { ...video, id };
}

function stateOf(video: OpenAiVideo & { id: string }): VideoTaskState {
  const status = STATUSES.find((s) => s === video.status);
  if (!status) throw new GatewayError('UPSTREAM_ERROR', `openai returned a video in an unknown status ${JSON.stringify(video.status)}`, { provider: 'openai' });
  const state: VideoTaskState = { status };
  if (typeof video.progress === 'number') state.progress = video.progress;
  if (status === 'completed') {
    // The content route needs the API key: the gateway downloads it (download below).
    state.result = { url: `/videos/${encodeURIComponent(video.id)}/content`, needsCredential: true, contentType: 'video/mp4' };
    const seconds = Number(video.seconds);
    if (typeof video.seconds === 'string' || typeof video.seconds === 'number') {
      if (Number.isFinite(seconds) && seconds >= 0) state.seconds = seconds;
    }
  }
  if (status === 'failed') {
    const message = typeof video.error?.message === 'string' ? video.error.message : undefined;
    const code = typeof video.error?.code === 'string' ? video.error.code : undefined;
    state.error = message ?? code ?? 'no reason given';
  }
  return state;
}

export const openaiVideo: VideoTranslator = {
  create(request, target): UpstreamRequest {
    if (request.image !== undefined) throw refuse('a first frame (image) for video generation through the JSON API', 'image');
    if (request.negative_prompt !== undefined) throw refuse('a negative prompt for video generation', 'negative_prompt');
    if (request.seed !== undefined) throw refuse('a seed for video generation', 'seed');
    if (request.seconds !== undefined && !SECONDS.includes(request.seconds)) throw refuse(`videos of ${request.seconds} seconds (4, 8 or 12)`, 'seconds');
    const body: Record<string, unknown> = { model: target.upstreamModel, prompt: request.prompt };
    if (request.seconds !== undefined) body.seconds = String(request.seconds);
    const size = sizeFor(request);
    if (size !== undefined) body.size = size;
    return { method: 'POST', path: '/videos', headers: { ...headers(target), 'content-type': 'application/json' }, body: JSON.stringify(body) };
  },
  created(body) {
    const video = parsed(body);
    return { taskId: video.id, state: stateOf(video) };
  },
  poll(taskId, target) {
    return { method: 'GET', path: `/videos/${encodeURIComponent(taskId)}`, headers: headers(target) };
  },
  state(body, _target, taskId) {
    return stateOf(parsed(body, taskId));
  },
  download(_taskId, resultUrl, target) {
    return { method: 'GET', path: resultUrl, headers: headers(target) };
  },
};
