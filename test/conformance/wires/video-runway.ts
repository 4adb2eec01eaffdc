/**
 * Runway's task API as the video kit's fake speaks it: POST /image_to_video or /text_to_video {model, promptText,
 * ratio, duration, ...} -> {id}; GET /tasks/{id} -> {id, status PENDING | RUNNING | SUCCEEDED | FAILED, progress
 * (0-1, while RUNNING), output: [public URL] | failure, failureCode}. Errors `{error}`. Every request carries the
 * bearer key and X-Runway-Version.
 */
import assert from 'node:assert/strict';
import { assertDocumented } from '../media-wire.ts';
import type { KitTask, VideoWire, VideoWireAnswer } from '../video-wire.ts';

/** The fields of image_to_video and text_to_video across Runway's video models. */
const DOCUMENTED = ['model', 'promptImage', 'promptText', 'ratio', 'duration', 'seed', 'contentModeration', 'audio'];

const STATUS = { queued: 'PENDING', in_progress: 'RUNNING', completed: 'SUCCEEDED', failed: 'FAILED' } as const;

const taskBody = (task: KitTask, files: string): VideoWireAnswer => ({
  body: JSON.stringify({
    id: task.id, createdAt: '2026-01-01T00:00:00.000Z', status: STATUS[task.status],
    ...(task.status === 'in_progress' ? { progress: task.progress / 100 } : {}),
    ...(task.status === 'completed' ? { output: [`${files}/kit-files/${task.id}.mp4`] } : {}),
    ...(task.status === 'failed' ? { failure: task.reason ?? 'failed', failureCode: 'INTERNAL.BAD_OUTPUT' } : {}),
  }),
});

export function runwayVideoWire(): VideoWire {
  return {
    create(req) {
      if (req.method !== 'POST' || !/\/(image|text)_to_video$/.test(req.path)) return null;
      assertDocumented(req.json, DOCUMENTED, 'runway');
      return { model: req.json?.model, prompt: req.json?.promptText, seconds: typeof req.json?.duration === 'number' ? req.json.duration : null };
    },
    created: (task) => ({ body: JSON.stringify({ id: task.id }) }),
    polled(req) {
      const match = req.method === 'GET' ? /\/tasks\/([^/]+)$/.exec(req.path) : null;
      return match ? decodeURIComponent(match[1]!) : null;
    },
    status: taskBody,
    downloaded: () => null,
    errorBody: (status, message) => ({ status, body: JSON.stringify({ error: message }) }),
    assertAuth(req, credential) {
      assert.equal(req.headers.authorization, `Bearer ${credential}`);
      assert.equal(req.headers['x-runway-version'], '2024-11-06');
    },
  };
}
