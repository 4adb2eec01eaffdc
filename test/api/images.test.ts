/**
 * POST /v1/images/generations and the /image-progress WebSocket through a real gateway, on a provider package
 * (loaded as a third party's would be) whose translator polls a loopback job API: the official `openai` client's
 * images.generate, n split into calls of at most maxImages, both response formats from both kinds of provider answer,
 * progress reports to the caller who made the request and to no one else, refusals before any call, and metering
 * by images at the size and quality asked.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import OpenAI from 'openai';
import WebSocket from 'ws';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { recordsOf } from '../helpers/usage.ts';

const PNG = Buffer.from('\x89PNG-fake-image-bytes', 'latin1');

/** A job API: POST /generate {prompt, n, bytes} -> {id}; GET /jobs/:id walks running 30%, running 70%, done. */
interface FakeJobs {
  origin: string;
  generated: Array<{ prompt: string; n: number; authorization?: string }>;
  close(): Promise<void>;
}

async function startFakeJobs(): Promise<FakeJobs> {
  const generated: FakeJobs['generated'] = [];
  const jobs = new Map<string, { n: number; bytes: boolean; polls: number }>();
  let origin = '';
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.method === 'POST' && req.url === '/generate') {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { prompt: string; n: number; bytes: boolean };
        generated.push({ prompt: body.prompt, n: body.n, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
        const id = `job-${generated.length}`;
        jobs.set(id, { n: body.n, bytes: body.bytes, polls: 0 });
        return json(201, { id });
      }
      const id = req.url?.startsWith('/jobs/') ? req.url.slice(6) : '';
      const job = jobs.get(id);
      if (job) {
        job.polls++;
        if (job.polls < 3) return json(200, { id, status: 'running', progress: job.polls === 1 ? 30 : 70 });
        const images = Array.from({ length: job.n }, (_, i) => (job.bytes ? { b64: PNG.toString('base64') } : { url: `${origin}/files/${i}.png` }));
        return json(200, { status: 'done', images, revised: 'a revised prompt' });
      }
      if (req.url?.startsWith('/files/')) {
        // A CDN: the gateway's provider credential must never reach it.
        if (req.headers.authorization) return json(403, { error: 'credential sent to the file host' });
        return res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
      }
      json(404, { error: 'no such route' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, generated, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** The provider package: two images per call, follow-ups until done, progress from the running answers. */
const providerModule = () => `
import { defineProvider, GatewayError } from ${JSON.stringify(pathToFileURL(new URL('../../core/public/provider.ts', import.meta.url).pathname).href)};
export default defineProvider({
  slug: 'pix', family: 'pix', displayName: 'Pix', configSchema: { type: 'object', additionalProperties: false, properties: {} },
  capabilities: { image: { maxImages: 2 } },
  image: {
    toUpstream: (request, target) => ({ method: 'POST', path: '/generate', headers: { authorization: 'Bearer ' + target.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: request.prompt, n: request.n, bytes: target.upstreamModel === 'bytes' }) }),
    followUp(body, target) {
      if (body.status === 'done') return null;
      return { request: { method: 'GET', path: '/jobs/' + body.id, headers: { authorization: 'Bearer ' + target.apiKey } } };
    },
    progress: (body) => (body.status === 'running' ? body.progress : undefined),
    fromUpstream: (body) => ({ images: body.images.map((i) => (i.b64 ? { b64_json: i.b64, mimeType: 'image/png', revised_prompt: body.revised } : { url: i.url, revised_prompt: body.revised })) }),
  },
  mapError: (status, body) => new GatewayError('UPSTREAM_ERROR', 'pix failed: ' + JSON.stringify(body), { provider: 'pix', status }),
});
`;

const config = (origin: string) => `
providerPackages: [./pix.mjs]
providers:
  pix: { baseUrl: ${origin}, apiKey: pix-secret }
  anthropic: { baseUrl: ${origin}/anthropic, apiKey: sk-ant }
models:
  - id: painter
    provider: pix
    pricing: { image: { default: 0.02, 1024x1024: 0.04, hd/1024x1024: 0.08 } }
  - id: painter-bytes
    provider: pix
    upstreamModel: bytes
  - id: claude
    provider: anthropic
pipelines:
  - name: images
    routes: [/v1/images/generations, /image-progress]
    plugins: [auth, ratelimit, budget, { usage: { flushIntervalMs: 10 } }]
`;

describe('image generation', () => {
  let fake: FakeJobs;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;

  before(async () => {
    fake = await startFakeJobs();
    gw = await startTestGateway(config(fake.origin), { files: { 'pix.mjs': providerModule() } });
    key = await gw.createKey({ scopes: { capabilities: ['images'] } });
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('the official client, b64_json from URL answers: n 3 is two calls (2 + 1), each polled to the end, the files downloaded without the credential', async () => {
    const before = fake.generated.length;
    const answer = await client.images.generate({ model: 'painter', prompt: 'a lighthouse at dusk', n: 3, response_format: 'b64_json' });
    assert.equal(answer.data?.length, 3);
    for (const image of answer.data!) {
      assert.equal(Buffer.from(image.b64_json!, 'base64').toString('latin1'), PNG.toString('latin1'));
      assert.equal(image.revised_prompt, 'a revised prompt');
      assert.equal(image.url, undefined);
    }
    assert.equal(typeof answer.created, 'number');
    assert.deepEqual(fake.generated.slice(before), [
      { prompt: 'a lighthouse at dusk', n: 2, authorization: 'Bearer pix-secret' },
      { prompt: 'a lighthouse at dusk', n: 1, authorization: 'Bearer pix-secret' },
    ]);
  });

  test('url: a URL answer passes as it is; a bytes answer becomes a data: URL', async () => {
    const urls = await client.images.generate({ model: 'painter', prompt: 'a fox', response_format: 'url' });
    assert.match(urls.data![0]!.url!, /^http:\/\/127\.0\.0\.1:\d+\/files\/0\.png$/);
    const bytes = await client.images.generate({ model: 'painter-bytes', prompt: 'a fox' });
    assert.equal(bytes.data![0]!.url, `data:image/png;base64,${PNG.toString('base64')}`);
    const b64 = await client.images.generate({ model: 'painter-bytes', prompt: 'a fox', response_format: 'b64_json' });
    assert.equal(b64.data![0]!.b64_json, PNG.toString('base64'));
  });

  test('metered by images at the size and quality asked: the most specific price applies', async () => {
    const cases = [
      { size: '1024x1024', quality: 'hd', n: 2, cost: 0.16 },
      { size: '1024x1024', n: 1, cost: 0.04 },
      { size: '512x512', n: 3, cost: 0.06 },
    ];
    for (const { size, quality, n, cost } of cases) {
      const requestId = `img-meter-${size}-${quality ?? 'none'}`;
      const response = await fetch(`${gw.url}/v1/images/generations`, {
        method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': requestId },
        body: JSON.stringify({ model: 'painter', prompt: 'p', n, size, ...(quality ? { quality } : {}) }),
      });
      assert.equal(response.status, 200, await response.clone().text());
      assert.equal(((await response.json()) as { data: unknown[] }).data.length, n);
      const [record] = await recordsOf(gw, requestId);
      assert.equal(record!.modality, 'image');
      assert.equal(Number(record!.images), n);
      assert.equal(Number(record!.cost_usd), cost, `${size} ${quality}`);
      assert.equal(record!.provider, 'pix');
    }
  });

  test('progress over /image-progress: the caller who made the request gets its reports, another caller nothing', async () => {
    const requestId = 'img-progress-1';
    const other = await gw.createKey({ scopes: { capabilities: ['images'] } });
    const wsUrl = `${gw.url.replace(/^http/, 'ws')}/image-progress?request_id=${requestId}`;
    const mine = new WebSocket(wsUrl, { headers: { authorization: `Bearer ${key}` } });
    const theirs = new WebSocket(wsUrl, { headers: { authorization: `Bearer ${other}` } });
    const received: unknown[] = [];
    const stolen: unknown[] = [];
    mine.on('message', (data) => received.push(JSON.parse(data.toString())));
    theirs.on('message', (data) => stolen.push(JSON.parse(data.toString())));
    await Promise.all([mine, theirs].map((ws) => new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))));
    const response = await fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify({ model: 'painter', prompt: 'p', n: 1 }),
    });
    assert.equal(response.status, 200);
    await response.arrayBuffer();
    assert.deepEqual(received, [
      { request_id: requestId, status: 'in_progress', progress: 30 },
      { request_id: requestId, status: 'in_progress', progress: 70 },
      { request_id: requestId, status: 'completed', progress: 100 },
    ]);
    assert.deepEqual(stolen, []);
    mine.close();
    theirs.close();
  });

  test('progress across calls, and subscribing by message to any id X-Request-ID takes', async () => {
    const requestId = 'img/progress+2=@team';
    const ws = new WebSocket(`${gw.url.replace(/^http/, 'ws')}/image-progress`, { headers: { authorization: `Bearer ${key}` } });
    const received: Array<Record<string, unknown>> = [];
    ws.on('message', (data) => received.push(JSON.parse(data.toString())));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send(JSON.stringify({ type: 'subscribe', request_id: requestId }));
    while (received.length === 0) await new Promise((resolve) => ws.once('message', resolve));
    assert.deepEqual(received.shift(), { subscribed: requestId });
    ws.send('not json');
    await new Promise((resolve) => ws.once('message', resolve));
    assert.equal((received.shift()!.error as { code: string }).code, 'VALIDATION_ERROR');
    const response = await fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify({ model: 'painter', prompt: 'p', n: 4 }),
    });
    assert.equal(response.status, 200);
    await response.arrayBuffer();
    // Two calls of two images: the first's 30 and 70 are 15 and 35 of the whole, the second's 65 and 85.
    assert.deepEqual(received.map((m) => m.progress), [15, 35, 65, 85, 100]);
    ws.close();
  });

  test('the WebSocket is authenticated before the upgrade, and only as a WebSocket', async () => {
    const refused = new WebSocket(`${gw.url.replace(/^http/, 'ws')}/image-progress`);
    const status = await new Promise<number>((resolve) => refused.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
    assert.equal(status, 401);
    const plain = await fetch(`${gw.url}/image-progress`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(plain.status, 400);
    assert.equal(((await plain.json()) as { error: { code: string } }).error.code, 'VALIDATION_ERROR');
    const noScope = await gw.createKey({ scopes: { capabilities: ['chat'] } });
    const forbidden = new WebSocket(`${gw.url.replace(/^http/, 'ws')}/image-progress`, { headers: { authorization: `Bearer ${noScope}` } });
    assert.equal(await new Promise<number>((resolve) => forbidden.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0))), 403);
  });

  test('refusals before any upstream call: out-of-range values, a provider without images, over 1 MB', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const before = fake.generated.length;
    for (const body of [
      { model: 'painter', prompt: '' },
      { model: 'painter', prompt: 'x'.repeat(4001) },
      { model: 'painter', prompt: 'p', n: 0 },
      { model: 'painter', prompt: 'p', n: 11 },
      { model: 'painter', prompt: 'p', size: 'big' },
      { model: 'painter', prompt: 'p', response_format: 'png' },
      { prompt: 'p' },
    ]) {
      const refused = await postJson(`${gw.url}/v1/images/generations`, body, auth);
      assert.equal(refused.status, 400, JSON.stringify(body).slice(0, 80));
      assert.equal(refused.body.error.code, 'VALIDATION_ERROR');
    }
    const claude = await postJson(`${gw.url}/v1/images/generations`, { model: 'claude', prompt: 'p' }, auth);
    assert.equal(claude.status, 400);
    assert.equal(claude.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
    const big = await postJson(`${gw.url}/v1/images/generations`, { model: 'painter', prompt: 'p', pad: 'x'.repeat(1024 * 1024) }, auth);
    assert.equal(big.status, 413);
    assert.equal(fake.generated.length, before, 'no refusal reached the provider');
  });
});
