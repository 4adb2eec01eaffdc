/**
 * A loopback Stability AI (v2beta Stable Image) as its API reference describes it: POST
 * /v2beta/stable-image/generate/{core|ultra|sd3} with a multipart/form-data body (prompt, aspect_ratio,
 * negative_prompt, seed, style_preset, output_format; sd3 also model), a bearer key, and `accept:
 * application/json` -> `{image: base64, finish_reason: SUCCESS, seed}`. Errors are `{id, name, errors: [..]}`:
 * 401 unauthorized, 400 bad_request for a missing prompt or a ratio it does not make, 403 content_moderation for
 * a prompt containing "forbidden". A prompt containing "blurred" answers 200 with finish_reason
 * CONTENT_FILTERED. Every request is recorded with its parsed form fields.
 */
import busboy from 'busboy';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const STABILITY_KEY = 'sk-stability-test';
/** A 1x1 PNG: what the fake "generates". */
export const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const RATIOS = new Set(['16:9', '1:1', '21:9', '2:3', '3:2', '4:5', '5:4', '9:16', '9:21']);

export interface StabilityRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The form's fields in the order they came. */
  fields: Array<[string, string]>;
}

export interface FakeStability {
  /** The base URL to configure: the origin and /v2beta. */
  baseUrl: string;
  requests: StabilityRequest[];
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const failure = (res: ServerResponse, status: number, name: string, errors: string[]) => json(res, status, { id: randomUUID().replace(/-/g, ''), name, errors });

function readForm(req: IncomingMessage): Promise<Array<[string, string]>> {
  return new Promise((resolve, reject) => {
    const fields: Array<[string, string]> = [];
    const parser = busboy({ headers: req.headers });
    parser.on('field', (name, value) => fields.push([name, value]));
    parser.on('file', (_name, stream) => stream.resume());
    parser.on('close', () => resolve(fields));
    parser.on('error', reject);
    req.pipe(parser);
  });
}

export async function startFakeStability(): Promise<FakeStability> {
  const requests: StabilityRequest[] = [];
  let seed = 1000;
  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    const multipart = String(req.headers['content-type']).startsWith('multipart/form-data');
    const record: StabilityRequest = { method: req.method ?? 'GET', path, headers: req.headers, fields: multipart ? await readForm(req) : [] };
    if (!multipart) req.resume();
    requests.push(record);
    const endpoint = /^\/v2beta\/stable-image\/generate\/(core|ultra|sd3)$/.exec(path)?.[1];
    if (!endpoint || req.method !== 'POST') return failure(res, 404, 'not_found', [`${req.method} ${path} is not a route`]);
    if (req.headers.authorization !== `Bearer ${STABILITY_KEY}`) return failure(res, 401, 'unauthorized', ['authorization: invalid or missing API key']);
    if (!multipart) return failure(res, 400, 'bad_request', ['content-type: must be multipart/form-data']);
    const form = Object.fromEntries(record.fields);
    if (!form.prompt) return failure(res, 400, 'bad_request', ['prompt: is required']);
    if (form.aspect_ratio !== undefined && !RATIOS.has(form.aspect_ratio)) return failure(res, 400, 'bad_request', [`aspect_ratio: must be one of ${[...RATIOS].join(', ')}`]);
    if (endpoint === 'sd3' && form.model !== undefined && !/^sd3/.test(form.model)) return failure(res, 400, 'bad_request', ['model: unknown model']);
    if (form.prompt.includes('forbidden')) return failure(res, 403, 'content_moderation', ['Your request was flagged by our content moderation system, as a result your request was denied and you were not charged.']);
    const used = form.seed && form.seed !== '0' ? Number(form.seed) : seed++;
    if (req.headers.accept !== 'application/json') {
      res.writeHead(200, { 'content-type': `image/${form.output_format ?? 'png'}`, 'finish-reason': 'SUCCESS', seed: String(used) });
      return res.end(Buffer.from(PNG_BASE64, 'base64'));
    }
    json(res, 200, { image: PNG_BASE64, finish_reason: form.prompt.includes('blurred') ? 'CONTENT_FILTERED' : 'SUCCESS', seed: used });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl: `${origin}/v2beta`,
    requests,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
