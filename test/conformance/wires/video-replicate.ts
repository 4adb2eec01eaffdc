/**
 * Replicate's predictions wire for the video kit: POST /v1/models/{owner}/{name}/predictions {input: {prompt,
 * duration, ...}} starts a prediction {id, status: starting, urls}; GET /v1/predictions/{id} reads it: processing
 * with the progress as a tqdm bar in `logs`, succeeded with `output` the video's URL (the kit's /kit-files/, as
 * public as replicate.delivery), failed with `error`. Errors are problem details {title, detail, status}.
 */
import assert from 'node:assert/strict';
import type { KitTask, VideoWire, VideoWireAnswer } from '../video-wire.ts';

const STATUS: Record<KitTask['status'], string> = { queued: 'starting', in_progress: 'processing', completed: 'succeeded', failed: 'failed' };

const VEO_FIELDS = ['prompt', 'aspect_ratio', 'duration', 'image', 'negative_prompt', 'resolution', 'generate_audio', 'seed'];

function prediction(task: KitTask, files: string, status = 201): VideoWireAnswer {
  const bar = `${String(task.progress).padStart(3)}%|${'#'.repeat(Math.round(task.progress / 10)).padEnd(10)}| ${task.progress / 2}/50\n`;
  return {
    status,
    body: JSON.stringify({
      id: task.id, model: task.model, version: 'hidden', input: { prompt: task.prompt }, status: STATUS[task.status], created_at: '2025-06-15T12:00:00Z',
      logs: task.status === 'queued' ? '' : bar,
      output: task.status === 'completed' ? `${files}/kit-files/${task.id}.mp4` : null,
      error: task.status === 'failed' ? task.reason ?? 'failed' : null,
      urls: { get: `${files}/v1/predictions/${task.id}`, cancel: `${files}/v1/predictions/${task.id}/cancel` },
    }),
  };
}

export function replicateVideoWire(): VideoWire {
  return {
    create(req) {
      const match = req.method === 'POST' ? /^\/v1\/models\/([^/]+)\/([^/]+)\/predictions$/.exec(req.path) : null;
      if (!match) return null;
      assert.deepEqual(Object.keys(req.json ?? {}), ['input']);
      const input = req.json.input as Record<string, unknown>;
      assert.deepEqual(Object.keys(input).filter((field) => !VEO_FIELDS.includes(field)), [], 'only the fields Veo documents');
      return { model: `${match[1]}/${match[2]}`, prompt: String(input.prompt), seconds: typeof input.duration === 'number' ? input.duration : null };
    },
    created: (task, files) => prediction(task, files),
    polled(req) {
      const match = req.method === 'GET' ? /^\/v1\/predictions\/([^/]+)$/.exec(req.path) : null;
      return match ? decodeURIComponent(match[1]!) : null;
    },
    status: (task, files) => prediction(task, files, 200),
    downloaded: () => null,
    errorBody: (status, message) => ({ status, headers: { 'content-type': 'application/problem+json' }, body: JSON.stringify({ title: 'Invalid input', detail: message, status }) }),
    assertAuth: (req, credential) => assert.equal(req.headers.authorization, `Bearer ${credential}`),
  };
}
