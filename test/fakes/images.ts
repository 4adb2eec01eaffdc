/**
 * A loopback upstream speaking the OpenAI-shaped image APIs (POST .../images/generations, JSON) under any path
 * prefix: OpenAI, Azure's deployments, Together, DeepInfra, nscale, xAI and Recraft. It makes `n` images and
 * answers each the way the request asked, as those providers do: `response_format` `url` gets URLs served by the
 * fake itself (GET /files/<name>.png, counted in `downloads`); `b64_json` or Together's `base64`, or no
 * response_format at all (GPT image models, nscale), gets the PNG's bytes as base64. Under `/xai/` base64 comes as
 * a data URL, as xAI's docs show it. dall-e-3 and xAI models get a revised prompt; GPT image models get token
 * usage and output_format. The prompt `reject me` gets a 400 in OpenAI's error shape; a prompt starting `urls:` gets
 * URLs whatever was asked (a host that ignores response_format). Every request is recorded.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ImageCall {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

export interface FakeImages {
  origin: string;
  calls: ImageCall[];
  /** Paths of the image files the gateway downloaded. */
  downloads: string[];
  close(): Promise<void>;
}

/** A 1x1 PNG: what every image is. */
export const PNG_BYTES = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==', 'base64');
export const PNG_B64 = PNG_BYTES.toString('base64');

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  const text = Buffer.concat(parts).toString('utf8');
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export async function startFakeImages(): Promise<FakeImages> {
  const fake = { calls: [] as ImageCall[], downloads: [] as string[] };
  let served = 0;
  const server = createServer((req, res) => {
    void (async () => {
      const path = req.url ?? '/';
      if (req.method === 'GET' && path.startsWith('/files/')) {
        fake.downloads.push(path);
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(PNG_BYTES);
        return;
      }
      const body = await readJson(req);
      fake.calls.push({ method: req.method ?? '', path, headers: req.headers, body });
      if (req.method !== 'POST' || !/\/images\/generations(\?|$)/.test(path)) return json(res, 404, { error: { message: `no route ${path}`, type: 'invalid_request_error' } });
      if (body.prompt === 'reject me') return json(res, 400, { error: { message: 'Your request was rejected by the safety system.', type: 'invalid_request_error', code: 'content_policy_violation' } });
      const model = String(body.model ?? '');
      const gptImage = /gpt-image/.test(model);
      const revised = /dall-e-3|grok/.test(model) || path.startsWith('/xai/');
      const data = Array.from({ length: Number(body.n ?? 1) }, (_, i) => {
        const image: Record<string, unknown> = {};
        if (body.response_format === 'url' || String(body.prompt).startsWith('urls:')) image.url = `http://${req.headers.host}/files/${++served}.png`;
        else image.b64_json = path.startsWith('/xai/') ? `data:image/png;base64,${PNG_B64}` : PNG_B64;
        if (revised) image.revised_prompt = `${String(body.prompt)}, revised ${i + 1}`;
        return image;
      });
      json(res, 200, {
        created: 1_700_000_000, data,
        ...(gptImage ? { output_format: 'png', usage: { input_tokens: 20, output_tokens: 1000, total_tokens: 1020, input_tokens_details: { text_tokens: 20, image_tokens: 0 } } } : {}),
      });
    })().catch((err: unknown) => json(res, 500, { error: { message: String(err) } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    ...fake,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
