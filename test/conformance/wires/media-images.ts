/**
 * The image wires of the OpenAI-compatible hosts with image APIs of their own, as their documentation describes
 * them (every one Bearer; none has a count field but SiliconFlow, so each call is one image):
 * - fireworks-ai: POST /workflows/accounts/fireworks/models/<model>/text_to_image `{prompt, aspect_ratio?}`; with
 *   `Accept: application/json`, `{id, base64: [data URL of a PNG], finishReason: SUCCESS, seed}`; errors
 *   `{error: {object, type, message}}`.
 * - hyperbolic: POST /image/generation `{model_name, prompt, width?, height?}` -> `{images: [{index, image}]}`
 *   (base64); errors `{detail}`.
 * - volcengine (Ark): POST /images/generations `{model, prompt, response_format, watermark}` -> `{model, created,
 *   data: [{url | b64_json, size}], usage: {generated_images}}`; errors `{error: {code, message, param, type}}`.
 * - zhipu (CogView): POST /images/generations `{model, prompt}` -> `{created, data: [{url}], content_filter}`;
 *   always a URL; errors `{error: {code, message}}`.
 * - siliconflow: POST /images/generations `{model, prompt, batch_size?}` -> `{images: [{url}] x batch_size,
 *   timings, seed}`; always URLs; errors `{code, message, data}`.
 * - nebius: POST /images/generations `{model, prompt, response_format, response_extension}` -> `{id, data: [{url |
 *   b64_json}]}`; errors FastAPI's `{detail: [{loc, msg, type}]}`.
 */
import assert from 'node:assert/strict';
import { assertDocumented, type ImageSummary, type ImageWire, type MediaAnswer, type MediaRequest } from '../media-wire.ts';

const json = (body: unknown, status = 200): MediaAnswer => ({ status, body: JSON.stringify(body) });
const bearer = (req: MediaRequest, credential: string) => assert.equal(req.headers.authorization, `Bearer ${credential}`);
const fileUrl = (files: string) => `${files}/kit-files/image.png`;

interface OwnImageApi {
  /** Whether the request is the one that asks for images; anything else is answered 404. */
  route(req: MediaRequest): boolean;
  /** The body fields the host's API reference documents: the kit asserts no other is sent. */
  documented: readonly string[];
  summarize(req: MediaRequest): ImageSummary;
  answer(req: MediaRequest, png: Buffer, files: string): unknown;
  error(message: string, status: number): unknown;
}

function ownImageWire(api: OwnImageApi): ImageWire {
  return {
    answer: (req, png, files) => (api.route(req) ? json(api.answer(req, png, files)) : json({ error: `no route ${req.method} ${req.path}` }, 404)),
    summarize(req) {
      if (!api.route(req)) return null;
      assertDocumented(req.json, api.documented, req.path);
      return api.summarize(req);
    },
    errorBody: (status, message) => json(api.error(message, status), status),
    assertAuth: bearer,
  };
}

const FIREWORKS_PATH = /\/workflows\/accounts\/[^/]+\/models\/([^/]+)\/text_to_image$/;

export const fireworksImageWire = ownImageWire({
  // Without Accept: application/json the workflow answers the image's bytes, not JSON.
  route: (req) => req.method === 'POST' && FIREWORKS_PATH.test(req.path) && req.headers.accept === 'application/json',
  documented: ['prompt', 'aspect_ratio', 'guidance_scale', 'num_inference_steps', 'seed'],
  summarize: (req) => ({ model: FIREWORKS_PATH.exec(req.path)![1]!, prompt: req.json?.prompt, n: 1 }),
  answer: (_req, png) => ({ id: 'fw-kit', base64: [`data:image/png;base64,${png.toString('base64')}`], finishReason: 'SUCCESS', seed: 7 }),
  error: (message) => ({ error: { object: 'error', type: 'invalid_request_error', message } }),
});

export const hyperbolicImageWire = ownImageWire({
  route: (req) => req.method === 'POST' && req.path.endsWith('/image/generation'),
  documented: ['model_name', 'prompt', 'height', 'width', 'backend', 'negative_prompt', 'steps', 'cfg_scale', 'seed', 'sampler', 'enable_refiner'],
  summarize: (req) => ({ model: req.json?.model_name, prompt: req.json?.prompt, n: 1 }),
  answer: (_req, png) => ({ images: [{ index: 0, image: png.toString('base64') }] }),
  error: (message) => ({ detail: message }),
});

const generations = (req: MediaRequest) => req.method === 'POST' && req.path.endsWith('/images/generations');

export const volcengineImageWire = ownImageWire({
  route: generations,
  documented: ['model', 'prompt', 'size', 'seed', 'guidance_scale', 'response_format', 'watermark', 'image', 'sequential_image_generation', 'stream', 'optimize_prompt_options'],
  summarize: (req) => ({ model: req.json?.model, prompt: req.json?.prompt, n: 1 }),
  answer: (req, png, files) => ({
    model: req.json.model, created: 1_757_469_067,
    data: [req.json.response_format === 'b64_json' ? { b64_json: png.toString('base64'), size: '1024x1024' } : { url: fileUrl(files), size: '1024x1024' }],
    usage: { generated_images: 1, output_tokens: 4096, total_tokens: 4096 },
  }),
  error: (message) => ({ error: { code: 'InvalidParameter', message, param: 'prompt', type: 'BadRequest' } }),
});

export const zhipuImageWire = ownImageWire({
  route: generations,
  documented: ['model', 'prompt', 'size', 'quality', 'user_id', 'watermark_enabled'],
  summarize: (req) => ({ model: req.json?.model, prompt: req.json?.prompt, n: 1 }),
  answer: (_req, _png, files) => ({ created: 1_757_469_067, data: [{ url: fileUrl(files) }], content_filter: [{ role: 'assistant', level: 3 }] }),
  error: (message) => ({ error: { code: '1214', message } }),
});

export const siliconflowImageWire = ownImageWire({
  route: generations,
  documented: ['model', 'prompt', 'negative_prompt', 'image_size', 'batch_size', 'seed', 'num_inference_steps', 'guidance_scale', 'cfg', 'image'],
  summarize: (req) => ({ model: req.json?.model, prompt: req.json?.prompt, n: req.json?.batch_size ?? 1 }),
  answer: (req, _png, files) => ({ images: Array.from({ length: Number(req.json.batch_size ?? 1) }, () => ({ url: fileUrl(files) })), timings: { inference: 0.8 }, seed: 42 }),
  error: (message) => ({ code: 20012, message, data: null }),
});

export const nebiusImageWire = ownImageWire({
  route: generations,
  documented: ['model', 'prompt', 'width', 'height', 'num_inference_steps', 'negative_prompt', 'seed', 'response_format', 'response_extension', 'loras'],
  summarize: (req) => ({ model: req.json?.model, prompt: req.json?.prompt, n: 1 }),
  answer: (req, png, files) => ({
    id: 'nb-kit', data: [req.json.response_format === 'b64_json' ? { b64_json: png.toString('base64'), url: null } : { b64_json: null, url: fileUrl(files) }],
  }),
  error: (message) => ({ detail: [{ loc: ['body', 'prompt'], msg: message, type: 'value_error' }] }),
});
