/**
 * Image wires of the providers with their own formats, for the media conformance kit:
 * - Stability AI: one multipart form per image to /stable-image/generate/{core|ultra|sd3} (the sd3 model in the
 *   form's `model`), answered `{image: base64, finish_reason: SUCCESS, seed}`; errors `{id, name, errors}`.
 * - Runway: POST /text_to_image `{model, promptText, ratio}` -> `{id}`; GET /tasks/{id} answers RUNNING 0.5,
 *   then SUCCEEDED with its output on /kit-files/; errors `{error}`. Every request carries X-Runway-Version.
 */
import assert from 'node:assert/strict';
import { assertDocumented, type ImageWire, type MediaRequest } from '../media-wire.ts';

const bearer = (req: MediaRequest, credential: string) => assert.equal(req.headers.authorization, `Bearer ${credential}`);

/** The form fields of Stable Image generate (core, ultra, sd3), and the JSON fields of Runway's text_to_image. */
const STABILITY_FIELDS = ['prompt', 'negative_prompt', 'aspect_ratio', 'seed', 'style_preset', 'output_format', 'model', 'image', 'strength', 'mode', 'cfg_scale'];
const RUNWAY_IMAGE_FIELDS = ['model', 'promptText', 'ratio', 'seed', 'referenceImages', 'contentModeration'];

export const stabilityImageWire: ImageWire = {
  answer: (req, png) => ({ body: JSON.stringify({ image: png.toString('base64'), finish_reason: 'SUCCESS', seed: 1234 }) }),
  summarize(req) {
    const endpoint = /\/stable-image\/generate\/(core|ultra|sd3)$/.exec(req.path)?.[1];
    if (!endpoint || !req.form) return null;
    assertDocumented(req.form.fields, STABILITY_FIELDS, 'stability-ai');
    if (endpoint !== 'sd3') assert.equal(req.form.fields.model, undefined, 'only the sd3 endpoint takes a model');
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
    summarize(req) {
      if (req.method !== 'POST' || !req.json) return null;
      assertDocumented(req.json, RUNWAY_IMAGE_FIELDS, 'runway');
      return { model: req.json.model, prompt: req.json.promptText, n: 1 };
    },
    errorBody: (_status, message) => ({ body: JSON.stringify({ error: message }) }),
    assertAuth(req, credential) {
      bearer(req, credential);
      assert.equal(req.headers['x-runway-version'], '2024-11-06');
    },
  };
}
