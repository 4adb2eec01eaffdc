/**
 * Video generation on fal (fal-ai/kling-video/..., fal-ai/veo3, ...): input `{prompt, duration, aspect_ratio,
 * image_url, negative_prompt, seed}`, output `{video: {url, content_type}}` on fal's public CDN.
 *
 * fal splits a poll in two: the status URL ({app}/requests/{id}/status, polled with logs for the progress) says
 * IN_QUEUE / IN_PROGRESS / COMPLETED but never carries the output, and the response URL has the output once
 * COMPLETED (before that fal answers it 400 "Request is still in progress", so it cannot be polled alone). So
 * `poll` GETs the status, and `followUp` turns a COMPLETED status into the GET of the response URL within the
 * same poll, whose output `state` reads as completed. A failed request is COMPLETED with `error` (and
 * `error_type`) in its status, read as failed; its response URL answers fal's error (4xx/5xx `{detail}`), which
 * mapError makes the job's failure. The task id is the request's path under the base URL
 * (fal-ai/kling-video/requests/{id}: status and response live under the app, not the submitted sub-path), so
 * `poll` rebuilds the URLs from it alone.
 */
import type { VideoTaskState } from '../../core/canonical/video.ts';
import type { ProviderTarget, VideoTranslator } from '../../core/dispatch/provider.ts';
import { isRecord } from '../shared/transcripts.ts';
import { falHeaders, falUrl, malformed, options, queueAnswer, queueProgress, submit } from './queue.ts';

const TASK = /^[A-Za-z0-9._~%-]+(?:\/[A-Za-z0-9._~%-]+)*\/requests\/[A-Za-z0-9._~%-]+$/;

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** 1280x720 -> 16:9, for models that take a ratio rather than a size. */
function ratioOf(size: string | undefined): string | undefined {
  const match = size ? /^(\d+)x(\d+)$/.exec(size) : null;
  if (!match) return undefined;
  const [w, h] = [Number(match[1]), Number(match[2])];
  const d = gcd(w, h);
  return d > 0 ? `${w / d}:${h / d}` : undefined;
}

/** The response URL's path under the base URL: what `poll` appends to the base URL again. */
function taskIdOf(responseUrl: string, target: ProviderTarget): string {
  const url = falUrl(responseUrl, target, 'response URL');
  const base = new URL(target.baseUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  const path = url.origin === base.origin && url.pathname.startsWith(`${prefix}/`) ? url.pathname.slice(prefix.length + 1) : '';
  if (!TASK.test(path) || path.split('/').includes('..')) throw malformed(target, `a response URL (${responseUrl}) that is not under the base URL`);
  return path;
}

function stateOf(body: unknown): VideoTaskState {
  const answer = queueAnswer(body);
  if (answer) {
    if (answer.status === 'COMPLETED' && answer.error) return { status: 'failed', error: answer.error };
    // A COMPLETED status reaches state only if its output was not fetched (followUp does that): not done yet.
    if (answer.status === 'IN_PROGRESS' || answer.status === 'COMPLETED') return { status: 'in_progress', progress: Math.min(queueProgress(answer), 99) };
    return { status: 'queued', progress: 0 };
  }
  const video = isRecord(body) ? body.video : undefined;
  const url = isRecord(video) ? video.url : undefined;
  if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) return { status: 'failed', error: 'fal answered an output without a video URL' };
  const contentType = isRecord(video) && typeof video.content_type === 'string' ? video.content_type : undefined;
  return { status: 'completed', progress: 100, result: { url, ...(contentType ? { contentType } : {}) } };
}

export const falVideo: VideoTranslator = {
  create(request, target) {
    const input: Record<string, unknown> = { prompt: request.prompt };
    if (request.seconds !== undefined) input.duration = `${request.seconds}${options(target).durationSuffix ?? ''}`;
    const ratio = request.aspect_ratio ?? ratioOf(request.size);
    if (ratio) input.aspect_ratio = ratio;
    if (request.image !== undefined) input.image_url = request.image;
    if (request.negative_prompt !== undefined) input.negative_prompt = request.negative_prompt;
    if (request.seed !== undefined) input.seed = request.seed;
    return submit(target, input);
  },
  created(body, target) {
    const answer = queueAnswer(body);
    if (!answer) throw malformed(target, 'a submit answer without request_id and response_url');
    return { taskId: taskIdOf(answer.responseUrl, target), state: stateOf(body) };
  },
  poll(taskId, target) {
    if (!TASK.test(taskId) || taskId.split('/').includes('..')) throw malformed(target, `a task id that is not a fal request path (${taskId})`);
    return { method: 'GET', path: `/${taskId}/status?logs=1`, headers: falHeaders(target) };
  },
  followUp(body, target) {
    const answer = queueAnswer(body);
    if (!answer || answer.status !== 'COMPLETED' || answer.error) return null;
    return { request: { method: 'GET', path: falUrl(answer.responseUrl, target, 'response URL').href, headers: falHeaders(target) } };
  },
  state: (body) => stateOf(body),
};
