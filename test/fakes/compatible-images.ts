/**
 * One loopback upstream speaking the image APIs of the OpenAI-compatible hosts that have their own, each under
 * its base URL's path, as their documentation describes them:
 * - fireworks-ai (/fireworks/inference/v1): POST /workflows/<account model>/text_to_image; with Accept
 *   application/json `{id, base64: [data URL of a PNG], finishReason, seed}` (CONTENT_FILTERED for a prompt
 *   saying "forbidden"); errors `{error: {object, type, message}}`.
 * - hyperbolic (/hyperbolic/v1): POST /image/generation {model_name, ...} -> `{images: [{index, image}]}`.
 * - volcengine (/volcengine/api/v3): POST /images/generations -> `{model, created, data: [{url | b64_json, size}],
 *   usage: {generated_images, output_tokens, total_tokens}}`; errors `{error: {code, message, param, type}}`.
 * - zhipu (/zhipu/api/paas/v4): POST /images/generations -> `{created, data: [{url}], content_filter}`; errors
 *   `{error: {code, message}}`.
 * - siliconflow (/siliconflow/v1): POST /images/generations -> `{images: [{url}] x batch_size, timings, seed}`;
 *   errors `{code, message, data}`.
 * - nebius (/nebius/v1): POST /images/generations -> `{id, data: [{url | b64_json}]}`; errors FastAPI's
 *   `{detail: [{loc, msg, type}]}`.
 * URLs point at /cdn/<name>.png on the same server, which refuses any request carrying a credential. A prompt
 * saying "fail" gets the host's error body with status 400; a wrong key gets 401. Every request is recorded.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export const FAKE_PNG = Buffer.from('\x89PNG\r\n\x1a\nfake-image-bytes', 'latin1');
export const IMAGE_KEYS = { fireworks: 'fw-key', hyperbolic: 'hb-key', volcengine: 'ark-key', zhipu: 'zp-key', siliconflow: 'sf-key', nebius: 'nb-key' } as const;
type Host = keyof typeof IMAGE_KEYS;

export interface ImageHostRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  json?: Record<string, unknown>;
}

export interface FakeImageHosts {
  origin: string;
  requests: ImageHostRequest[];
  /** The /cdn/ downloads, with whether each carried an Authorization header. */
  downloads: Array<{ path: string; authorization: boolean }>;
  close(): Promise<void>;
}

const ROUTES: Array<[Host, RegExp]> = [
  ['fireworks', /^\/fireworks\/inference\/v1\/workflows\/accounts\/[^/]+\/models\/[^/]+\/text_to_image$/],
  ['hyperbolic', /^\/hyperbolic\/v1\/image\/generation$/],
  ['volcengine', /^\/volcengine\/api\/v3\/images\/generations$/],
  ['zhipu', /^\/zhipu\/api\/paas\/v4\/images\/generations$/],
  ['siliconflow', /^\/siliconflow\/v1\/images\/generations$/],
  ['nebius', /^\/nebius\/v1\/images\/generations$/],
];

/** Each host's error body for a message. */
const ERRORS: Record<Host, (message: string) => unknown> = {
  fireworks: (message) => ({ error: { object: 'error', type: 'invalid_request_error', message } }),
  hyperbolic: (message) => ({ detail: message }),
  volcengine: (message) => ({ error: { code: 'InvalidParameter', message, param: 'prompt', type: 'BadRequest' } }),
  zhipu: (message) => ({ error: { code: '1214', message } }),
  siliconflow: (message) => ({ code: 20012, message, data: null }),
  nebius: (message) => ({ detail: [{ loc: ['body', 'prompt'], msg: message, type: 'value_error' }] }),
};

function answer(host: Host, body: Record<string, unknown>, cdn: (name: string) => string): unknown {
  const b64 = FAKE_PNG.toString('base64');
  switch (host) {
    case 'fireworks':
      return String(body.prompt).includes('forbidden')
        ? { id: 'fw-1', base64: [], finishReason: 'CONTENT_FILTERED', seed: 11 }
        : { id: 'fw-1', base64: [`data:image/png;base64,${b64}`], finishReason: 'SUCCESS', seed: 11 };
    case 'hyperbolic':
      return { images: [{ index: 0, image: b64 }] };
    case 'volcengine':
      return { model: body.model, created: 1757469067, data: [body.response_format === 'b64_json' ? { b64_json: b64, size: '1024x1024' } : { url: cdn('ark.jpeg'), size: '1024x1024' }], usage: { generated_images: 1, output_tokens: 4096, total_tokens: 4096 } };
    case 'zhipu':
      return { created: 1757469067, data: [{ url: cdn('cogview.png') }], content_filter: [{ role: 'assistant', level: 3 }] };
    case 'siliconflow':
      return { images: Array.from({ length: Number(body.batch_size ?? 1) }, (_, i) => ({ url: cdn(`sf-${i}.png`) })), timings: { inference: 0.8 }, seed: 42 };
    case 'nebius':
      return { id: 'nb-1', data: [body.response_format === 'b64_json' ? { b64_json: b64, url: null } : { b64_json: null, url: cdn('nebius.png') }] };
  }
}

export async function startFakeImageHosts(): Promise<FakeImageHosts> {
  const requests: ImageHostRequest[] = [];
  const downloads: FakeImageHosts['downloads'] = [];
  let origin = '';
  const cdn = (name: string) => `${origin}/cdn/${name}`;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const path = (req.url ?? '').split('?')[0]!;
      if (req.method === 'GET' && path.startsWith('/cdn/')) {
        downloads.push({ path, authorization: req.headers.authorization !== undefined });
        if (req.headers.authorization) return send(403, { error: 'a credential was sent to the file host' });
        return res.writeHead(200, { 'content-type': 'image/png' }).end(FAKE_PNG);
      }
      const raw = Buffer.concat(chunks).toString();
      const record: ImageHostRequest = { method: req.method ?? '', path, headers: req.headers };
      try {
        if (raw) record.json = JSON.parse(raw) as Record<string, unknown>;
      } catch { /* recorded without a body: the route answers 400 */ }
      requests.push(record);
      const host = ROUTES.find(([, route]) => route.test(path))?.[0];
      if (!host || req.method !== 'POST') return send(404, { error: `no route ${req.method} ${path}` });
      if (req.headers.authorization !== `Bearer ${IMAGE_KEYS[host]}`) return res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify(ERRORS[host]('invalid api key')));
      if (!record.json || typeof record.json.prompt !== 'string') return send(400, ERRORS[host]('prompt is required'));
      if (record.json.prompt.includes('fail')) return send(400, ERRORS[host](`${host} rejected the prompt`));
      send(200, answer(host, record.json, cdn));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, requests, downloads, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
