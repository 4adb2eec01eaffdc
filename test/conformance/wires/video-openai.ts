/**
 * OpenAI's video API as the video kit's fake speaks it: POST /videos {model, prompt, seconds: "4" | "8" | "12",
 * size} and GET /videos/{id} answer the video object {id, object: "video", status, progress, seconds, size,
 * error}; GET /videos/{id}/content is the MP4, with the key. Errors `{error: {message, type, code}}`.
 */
import assert from 'node:assert/strict';
import type { KitTask, VideoWire, VideoWireAnswer } from '../video-wire.ts';

const videoObject = (task: KitTask): VideoWireAnswer => ({
  body: JSON.stringify({
    id: task.id, object: 'video', created_at: 1758941485, status: task.status, model: task.model, progress: task.progress,
    seconds: String(task.seconds ?? 4), size: '720x1280',
    ...(task.status === 'failed' ? { error: { code: 'video_generation_failed', message: task.reason ?? 'failed' } } : {}),
  }),
});

export function openAiVideoWire(): VideoWire {
  return {
    create(req) {
      if (req.method !== 'POST' || !req.path.endsWith('/videos')) return null;
      return { model: req.json?.model, prompt: req.json?.prompt, seconds: req.json?.seconds === undefined ? null : Number(req.json.seconds) };
    },
    created: videoObject,
    polled(req) {
      const match = req.method === 'GET' ? /\/videos\/([^/]+)$/.exec(req.path) : null;
      return match ? decodeURIComponent(match[1]!) : null;
    },
    status: videoObject,
    downloaded(req) {
      const match = req.method === 'GET' ? /\/videos\/([^/]+)\/content$/.exec(req.path) : null;
      return match ? decodeURIComponent(match[1]!) : null;
    },
    errorBody: (status, message) => ({ status, body: JSON.stringify({ error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', code: null } }) }),
    assertAuth: (req, credential) => assert.equal(req.headers.authorization, `Bearer ${credential}`),
  };
}
