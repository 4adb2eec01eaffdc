/**
 * fal's FLUX image generation through a real gateway against the loopback fal (test/fakes/fal.ts): the official
 * `openai` client, n above FLUX's 4 split into calls, each submitted with its input and polled IN_QUEUE ->
 * IN_PROGRESS -> COMPLETED then read at the response URL, the images downloaded from fal's CDN (another origin)
 * without the credential for b64_json and passed as they are for url, progress over /image-progress from the
 * status answers (the logged percentage), fal's errors mapped (a 500 retried), and the images metered.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import WebSocket from 'ws';
import { FAL_KEY, startFakeFal, type FakeFal } from '../fakes/fal.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { recordsOf } from '../helpers/usage.ts';

const config = (origin: string) => `
upstream:
  breaker:
    volumeThreshold: 1000
providers:
  fal-ai:
    baseUrl: ${origin}
    apiKey: ${FAL_KEY}
    options: { pollIntervalMs: 1, input: { enable_safety_checker: true } }
models:
  - id: flux
    provider: fal-ai
    upstreamModel: fal-ai/flux/dev
    pricing: { image: { default: 0.025 } }
pipelines:
  - name: images
    routes: [/v1/images/generations, /image-progress]
    plugins: [auth, { usage: { flushIntervalMs: 10 } }]
`;

describe('fal-ai: FLUX image generation', () => {
  let fake: FakeFal;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;
  const since = (n: number) => fake.requests.slice(n);

  before(async () => {
    fake = await startFakeFal();
    gw = await startTestGateway(config(fake.origin));
    key = await gw.createKey({ scopes: { capabilities: ['images'] } });
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('b64_json, n 5: two calls (4 + 1), each walked to its output; the files fetched from the CDN without the credential', async () => {
    const start = fake.requests.length;
    const statuses = fake.statuses.length;
    const answer = await client.images.generate({ model: 'flux', prompt: 'a red fox', n: 5, size: '1024x768', response_format: 'b64_json' });
    assert.equal(answer.data!.length, 5);
    const expected = [0, 1, 2, 3, 0].map((i) => fake.files[`image-${i}.png`]!.bytes.toString('base64'));
    assert.deepEqual(answer.data!.map((d) => d.b64_json), expected);
    const sent = since(start);
    const submits = sent.filter((r) => r.method === 'POST');
    assert.deepEqual(submits.map((r) => [r.path, r.json]), [4, 1].map((n) => ['/fal-ai/flux/dev', { enable_safety_checker: true, prompt: 'a red fox', num_images: n, output_format: 'png', image_size: { width: 1024, height: 768 } }]));
    const queue = sent.filter((r) => r.server === 'queue');
    assert.deepEqual(queue.map((r) => `${r.method} ${r.path.replace(/[0-9a-f-]{36}/, 'ID')}${r.query.logs ? '?logs=1' : ''}`), Array(2).fill([
      'POST /fal-ai/flux/dev',
      'GET /fal-ai/flux/requests/ID/status?logs=1', 'GET /fal-ai/flux/requests/ID/status?logs=1', 'GET /fal-ai/flux/requests/ID/status?logs=1',
      'GET /fal-ai/flux/requests/ID',
    ]).flat(), 'status and response under the app, not the submitted sub-path');
    assert.deepEqual(fake.statuses.slice(statuses), Array(2).fill(['IN_QUEUE', 'IN_QUEUE', 'IN_PROGRESS', 'COMPLETED']).flat());
    assert.ok(queue.every((r) => r.headers.authorization === `Key ${FAL_KEY}`));
    const downloads = sent.filter((r) => r.server === 'cdn');
    assert.equal(downloads.length, 5);
    assert.ok(downloads.every((r) => r.headers.authorization === undefined), 'no fal credential to the CDN');
  });

  test('url: fal\'s CDN URLs passed as they are; the images metered at the model\'s price', async () => {
    const requestId = 'fal-image-url';
    const response = await fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify({ model: 'flux', prompt: 'a fox', n: 2 }),
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-provider'), 'fal-ai');
    const body = (await response.json()) as { data: Array<{ url: string }> };
    assert.deepEqual(body.data.map((d) => d.url), [`${fake.cdnOrigin}/files/image-0.png`, `${fake.cdnOrigin}/files/image-1.png`]);
    const [record] = await recordsOf(gw, requestId);
    assert.deepEqual([record!.modality, Number(record!.images), Number(record!.cost_usd), record!.provider], ['image', 2, 0.05, 'fal-ai']);
  });

  test('progress over /image-progress: queued 0, the logged 40%, then completed', async () => {
    const requestId = 'fal-image-progress';
    const ws = new WebSocket(`${gw.url.replace(/^http/, 'ws')}/image-progress?request_id=${requestId}`, { headers: { authorization: `Bearer ${key}` } });
    const received: Array<{ status: string; progress: number }> = [];
    ws.on('message', (data) => received.push(JSON.parse(data.toString())));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const response = await fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify({ model: 'flux', prompt: 'p' }),
    });
    assert.equal(response.status, 200);
    await response.arrayBuffer();
    assert.deepEqual(received.map((m) => [m.status, m.progress]), [
      ['in_progress', 0], ['in_progress', 0], ['in_progress', 40], ['in_progress', 100], ['completed', 100],
    ], 'the submit answer and IN_QUEUE at 0, IN_PROGRESS at its logged tqdm percentage, COMPLETED');
    ws.close();
  });

  test('fal\'s errors: a failed request\'s result (422) answers fal\'s detail; a 500 is retried as any upstream failure', async () => {
    fake.resultError = { status: 422, body: { detail: [{ loc: ['body', 'prompt'], msg: 'Prompt was flagged', type: 'content_policy_violation' }] } };
    const failed = await postJson(`${gw.url}/v1/images/generations`, { model: 'flux', prompt: 'p' }, { authorization: `Bearer ${key}` });
    assert.equal(failed.status, 400, JSON.stringify(failed.body));
    assert.equal(failed.body.error.code, 'UPSTREAM_BAD_REQUEST');
    assert.match(failed.body.error.message, /fal-ai: Prompt was flagged \(body\.prompt\)/);
    const start = fake.requests.length;
    fake.resultError = { status: 500, body: { detail: 'CUDA out of memory' } };
    const retried = await postJson(`${gw.url}/v1/images/generations`, { model: 'flux', prompt: 'p' }, { authorization: `Bearer ${key}` });
    assert.equal(retried.status, 200, JSON.stringify(retried.body));
    assert.equal(since(start).filter((r) => r.method === 'POST').length, 2, 'submitted again after the 500');
  });

  test('a request fal reports COMPLETED with an error fails with that reason, its response not read', async () => {
    const start = fake.requests.length;
    fake.statusError = 'Runner disconnected';
    const failed = await postJson(`${gw.url}/v1/images/generations`, { model: 'flux', prompt: 'p' }, { authorization: `Bearer ${key}` });
    assert.equal(failed.status, 502, JSON.stringify(failed.body));
    assert.equal(failed.body.error.code, 'UPSTREAM_ERROR');
    assert.match(failed.body.error.message, /fal-ai: request [0-9a-f-]{36} failed: Runner disconnected/);
    assert.ok(since(start).every((r) => r.path.endsWith('/status') || r.method === 'POST'), 'no read of the response URL');
  });
});
