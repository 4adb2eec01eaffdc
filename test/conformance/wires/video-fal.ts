/**
 * fal's queue as the video kit's fake speaks it: POST /{model_id} with `{prompt, duration: "5", ...}` -> `{request_id,
 * response_url, status_url, cancel_url, status: IN_QUEUE}` under the app (the first two segments); GET
 * .../requests/{id}/status -> IN_QUEUE | IN_PROGRESS (logs carrying the percentage) | COMPLETED (with `error` and
 * `error_type` when the request failed); GET .../requests/{id} -> the output `{video: {url, content_type}}` once
 * completed, 400 "Request is still in progress" before, fal's error `{detail}` for a failed request. The video
 * is a public CDN URL. `Authorization: Key <key>`.
 */
import assert from 'node:assert/strict';
import type { KitTask, VideoWire, VideoWireAnswer } from '../video-wire.ts';

const REQUEST = /^\/(.+?)\/requests\/([^/]+)(\/status)?$/;
const json = (body: unknown, status = 200): VideoWireAnswer => ({ status, body: JSON.stringify(body) });
const STATUS = { queued: 'IN_QUEUE', in_progress: 'IN_PROGRESS', completed: 'COMPLETED', failed: 'COMPLETED' } as const;

export function falVideoWire(): VideoWire {
  // The kit answers a poll with status(task): which of fal's two URLs was read decides the answer.
  let read: 'status' | 'response' = 'status';
  const urls = (task: KitTask, files: string) => {
    const base = `${files}/${task.model.split('/').slice(0, 2).join('/')}/requests/${encodeURIComponent(task.id)}`;
    return { request_id: task.id, response_url: base, status_url: `${base}/status`, cancel_url: `${base}/cancel` };
  };
  return {
    create(req) {
      if (req.method !== 'POST' || REQUEST.test(req.path)) return null;
      return { model: req.path.slice(1), prompt: req.json?.prompt, seconds: req.json?.duration === undefined ? null : Number.parseInt(String(req.json.duration), 10) };
    },
    created: (task, files) => json({ status: 'IN_QUEUE', queue_position: 0, ...urls(task, files) }),
    polled(req) {
      const match = req.method === 'GET' ? REQUEST.exec(req.path) : null;
      if (!match) return null;
      read = match[3] ? 'status' : 'response';
      return decodeURIComponent(match[2]!);
    },
    status(task, files) {
      if (read === 'status') {
        const failed = task.status === 'failed' ? { error: task.reason ?? 'failed', error_type: 'internal_server_error' } : {};
        const logs = task.status === 'in_progress' ? [{ message: `${task.progress}%|████      |`, level: 'INFO' }] : [];
        return json({ status: STATUS[task.status], ...urls(task, files), logs, ...failed });
      }
      if (task.status === 'failed') return json({ detail: task.reason ?? 'failed' }, 500);
      if (task.status !== 'completed') return json({ detail: 'Request is still in progress', ...urls(task, files) }, 400);
      return json({ video: { url: `${files}/kit-files/${encodeURIComponent(task.id)}.mp4`, content_type: 'video/mp4' } });
    },
    downloaded: () => null,
    errorBody: (status, message) => json({ detail: message }, status),
    assertAuth: (req, credential) => assert.equal(req.headers.authorization, `Key ${credential}`),
  };
}
