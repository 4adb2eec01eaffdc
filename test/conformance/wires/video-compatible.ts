/**
 * The video task APIs of the OpenAI-compatible hosts as the video kit's fake speaks them; each host's video URL
 * is public (/kit-files/ on the fake's origin), so nothing is downloaded with a credential.
 * - together-ai: POST /v2/videos {model, prompt, seconds: "6"}, GET /v2/videos/{id}: {id, status, seconds,
 *   outputs: {video_url, cost}, error: {code, message}}; OpenAI-shaped errors.
 * - xai: POST /v1/videos/generations {model, prompt, duration} -> {request_id}; GET /v1/videos/{id}: a bodiless
 *   202 while queued, {status: pending, progress} while running, {status: done, video: {url, duration}} or
 *   {status: failed, error}; errors {code, error}.
 * - zhipu: POST /videos/generations {model, prompt, duration} -> {id, task_status: PROCESSING}; GET
 *   /async-result/{id}: PROCESSING until SUCCESS (video_result [{url, cover_image_url}]) or FAIL (no reason).
 * - volcengine: POST /contents/generations/tasks {model, content: [{type: text, text: "<prompt> --duration 5"}]}
 *   -> {id}; GET /contents/generations/tasks/{id}: {status: queued | running | succeeded | failed, content:
 *   {video_url}, duration, error: {code, message}}.
 */
import assert from 'node:assert/strict';
import type { KitTask, VideoWire, VideoWireAnswer, VideoWireRequest } from '../video-wire.ts';

const answer = (body: unknown, status = 200): VideoWireAnswer => ({ status, body: JSON.stringify(body) });
const file = (task: KitTask, files: string) => `${files}/kit-files/${task.id}.mp4`;
const bearer = (req: VideoWireRequest, credential: string) => assert.equal(req.headers.authorization, `Bearer ${credential}`);
const openAiError = (status: number, message: string) => answer({ error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', code: null } }, status);
const idOf = (req: VideoWireRequest, pattern: RegExp) => {
  const match = req.method === 'GET' ? pattern.exec(req.path) : null;
  return match ? decodeURIComponent(match[1]!) : null;
};
const number = (value: unknown) => (value === undefined ? null : Number(value));

export function togetherVideoWire(): VideoWire {
  const job = (task: KitTask, files: string) => answer({
    id: task.id, object: 'video', model: task.model, status: task.status,
    ...(task.status === 'completed' ? { seconds: String(task.seconds ?? 5), outputs: { cost: 0.28, video_url: file(task, files) } } : {}),
    ...(task.status === 'failed' ? { error: { code: 'generation_failed', message: task.reason ?? 'failed' } } : {}),
  });
  return {
    create: (req) => (req.method === 'POST' && req.path.endsWith('/v2/videos') ? { model: req.json?.model, prompt: req.json?.prompt, seconds: number(req.json?.seconds) } : null),
    created: job,
    polled: (req) => idOf(req, /\/v2\/videos\/([^/]+)$/),
    status: job,
    downloaded: () => null,
    errorBody: openAiError,
    assertAuth: bearer,
  };
}

export function xaiVideoWire(): VideoWire {
  return {
    create: (req) => (req.method === 'POST' && req.path.endsWith('/videos/generations') ? { model: req.json?.model, prompt: req.json?.prompt, seconds: number(req.json?.duration) } : null),
    created: (task) => answer({ request_id: task.id }),
    polled: (req) => idOf(req, /\/videos\/([^/]+)$/),
    status(task, files) {
      switch (task.status) {
        case 'queued': return { status: 202, body: '' };
        case 'in_progress': return answer({ status: 'pending', progress: task.progress, model: task.model });
        case 'completed': return answer({ status: 'done', model: task.model, video: { url: file(task, files), duration: task.seconds ?? 6, respect_moderation: true } });
        case 'failed': return answer({ status: 'failed', error: { code: 'generation_failed', message: task.reason ?? 'failed' } });
      }
    },
    downloaded: () => null,
    errorBody: (status, message) => answer({ code: status >= 500 ? 'Internal error' : 'Client specified an invalid argument', error: message }, status),
    assertAuth: bearer,
  };
}

export function zhipuVideoWire(): VideoWire {
  const status = (task: KitTask, files: string) => {
    const base = { model: task.model, request_id: `req-${task.id}` };
    if (task.status === 'completed') return answer({ ...base, task_status: 'SUCCESS', video_result: [{ url: file(task, files), cover_image_url: `${files}/kit-files/${task.id}.png` }] });
    return answer({ ...base, task_status: task.status === 'failed' ? 'FAIL' : 'PROCESSING' });
  };
  return {
    create: (req) => (req.method === 'POST' && req.path.endsWith('/videos/generations') ? { model: req.json?.model, prompt: req.json?.prompt, seconds: number(req.json?.duration) } : null),
    created: (task) => answer({ model: task.model, id: task.id, request_id: `req-${task.id}`, task_status: 'PROCESSING' }),
    polled: (req) => idOf(req, /\/async-result\/([^/]+)$/),
    status,
    downloaded: () => null,
    errorBody: (status, message) => answer({ error: { code: status >= 500 ? '500' : '1214', message } }, status),
    assertAuth: bearer,
  };
}

const ARK_STATUS: Record<KitTask['status'], string> = { queued: 'queued', in_progress: 'running', completed: 'succeeded', failed: 'failed' };

export function volcengineVideoWire(): VideoWire {
  return {
    create(req) {
      if (req.method !== 'POST' || !req.path.endsWith('/contents/generations/tasks')) return null;
      const text: string = (req.json?.content ?? []).find((part: { type?: string }) => part.type === 'text')?.text ?? '';
      const duration = / --duration (\d+)/.exec(text);
      return { model: req.json?.model, prompt: text.split(' --')[0]!, seconds: duration ? Number(duration[1]) : null };
    },
    created: (task) => answer({ id: task.id }),
    polled: (req) => idOf(req, /\/contents\/generations\/tasks\/([^/]+)$/),
    status: (task, files) => answer({
      id: task.id, model: task.model, status: ARK_STATUS[task.status], created_at: 1743414619, updated_at: 1743414673,
      ...(task.status === 'completed' ? { content: { video_url: file(task, files) }, duration: task.seconds ?? 5, usage: { completion_tokens: 108900, total_tokens: 108900 } } : {}),
      ...(task.status === 'failed' ? { error: { code: 'InternalServiceError', message: task.reason ?? 'failed' } } : {}),
    }),
    downloaded: () => null,
    errorBody: (status, message) => answer({ error: { code: status >= 500 ? 'InternalServiceError' : 'InvalidParameter', message, param: '', type: 'BadRequest' } }, status),
    assertAuth: bearer,
  };
}
