/**
 * Image wires of the providers with their own formats, for the media conformance kit:
 * - Stability AI: one multipart form per image to /stable-image/generate/{core|ultra|sd3} (the sd3 model in the
 *   form's `model`), answered `{image: base64, finish_reason: SUCCESS, seed}`; errors `{id, name, errors}`.
 * - Runway: POST /text_to_image `{model, promptText, ratio}` -> `{id}`; GET /tasks/{id} answers RUNNING 0.5,
 *   then SUCCEEDED with its output on /kit-files/; errors `{error}`. Every request carries X-Runway-Version.
 */
import assert from 'node:assert/strict';
import type { ImageWire, MediaRequest } from '../media-wire.ts';

const bearer = (req: MediaRequest, credential: string) => assert.equal(req.headers.authorization, `Bearer ${credential}`);

export const stabilityImageWire: ImageWire = {
  answer: (req, png) => ({ body: JSON.stringify({ image: png.toString('base64'), finish_reason: 'SUCCESS', seed: 1234 }) }),
  summarize(req) {
    const endpoint = /\/stable-image\/generate\/(core|ultra|sd3)$/.exec(req.path)?.[1];
    if (!endpoint || !req.form) return null;
    return { model: endpoint === 'sd3' ? req.form.fields.model! : endpoint, prompt: req.form.fields.prompt!, n: 1 };
  },
  errorBody: (status, message) => ({ body: JSON.stringify({ id: 'e0', name: status === 429 ? 'rate_limit_exceeded' : 'bad_request', errors: [message] }) }),
  assertAuth(req, credential) {
    bearer(req, credential);
    assert.equal(req.headers.accept, 'application/json');
  },
};

export function runwayImageWire(): ImageWire {
  const reads = new Map<string, number>();
  let tasks = 0;
  return {
    answer(req, _png, files) {
      if (req.method === 'POST') {
        const id = `task-${++tasks}`;
        reads.set(id, 0);
        return { body: JSON.stringify({ id }) };
      }
      const id = /\/tasks\/([^/]+)$/.exec(req.path)?.[1] ?? '';
      const read = (reads.get(id) ?? 0) + 1;
      reads.set(id, read);
      const task = read === 1 ? { id, status: 'RUNNING', progress: 0.5 } : { id, status: 'SUCCEEDED', output: [`${files}/kit-files/image.png`] };
      return { body: JSON.stringify({ createdAt: '2026-01-01T00:00:00Z', ...task }) };
    },
    summarize: (req) => (req.method === 'POST' && req.json ? { model: req.json.model, prompt: req.json.promptText, n: 1 } : null),
    errorBody: (_status, message) => ({ body: JSON.stringify({ error: message }) }),
    assertAuth(req, credential) {
      bearer(req, credential);
      assert.equal(req.headers['x-runway-version'], '2024-11-06');
    },
  };
}
