/**
 * FLUX on Replicate through a real gateway's POST /v1/images/generations against a loopback Replicate
 * (test/fakes/replicate-media.ts): the official client, n split into predictions of at most four images, each
 * prediction polled starting -> processing -> succeeded, the progress its logs' bars show reported on
 * /image-progress, URL answers passed on and downloaded (without the credential) for b64_json, sizes refused
 * before any call, a failed prediction, and the images metered.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import WebSocket from 'ws';
import { REPLICATE_MEDIA_KEY, startFakeReplicateMedia, type FakeReplicateMedia } from '../fakes/replicate-media.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { recordsOf } from '../helpers/usage.ts';

const config = (origin: string) => `
routing:
  retries: 0
upstream:
  breaker:
    volumeThreshold: 1000
providers:
  replicate:
    baseUrl: ${origin}/v1
    apiKey: ${REPLICATE_MEDIA_KEY}
    options: { pollIntervalMs: 1, maxPollIntervalMs: 2 }
models:
  - id: flux
    provider: replicate
    upstreamModel: black-forest-labs/flux-schnell
    pricing: { image: { default: 0.003 } }
pipelines:
  - name: images
    routes: [/v1/images/generations, /image-progress]
    plugins: [auth, { usage: { flushIntervalMs: 10 } }]
`;

describe('replicate images through the gateway', () => {
  let fake: FakeReplicateMedia;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;
  let seen = 0;
  const sent = () => fake.requests.slice(seen);
  const creations = () => sent().filter((r) => r.method === 'POST');

  before(async () => {
    fake = await startFakeReplicateMedia();
    gw = await startTestGateway(config(fake.origin));
    key = await gw.createKey({ scopes: { capabilities: ['images'] } });
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });
  beforeEach(() => {
    seen = fake.requests.length;
    delete fake.failWith;
  });

  test('the official client: n 6 is two predictions (4 + 2), each polled to the end; b64_json downloads the files without the credential', async () => {
    const answer = await client.images.generate({ model: 'flux', prompt: 'a lighthouse at dusk', n: 6, size: '1792x1024', response_format: 'b64_json' });
    assert.equal(answer.data?.length, 6);
    const [first, second] = creations();
    assert.equal(first!.path, '/v1/models/black-forest-labs/flux-schnell/predictions');
    assert.deepEqual(first!.json, { input: { prompt: 'a lighthouse at dusk', output_format: 'png', num_outputs: 4, aspect_ratio: '16:9' } });
    assert.equal(second!.json.input.num_outputs, 2);
    assert.equal(first!.headers.prefer, undefined, 'not held: polled, so progress is seen');
    const files = sent().filter((r) => r.path.startsWith('/files/'));
    assert.equal(files.length, 6);
    assert.ok(files.every((f) => f.headers.authorization === undefined), 'no credential to the file host');
    assert.deepEqual(answer.data!.map((d) => Buffer.from(d.b64_json!, 'base64')), files.map((f) => fake.fileBytes(f.path.slice('/files/'.length))));
    const polls = sent().filter((r) => r.method === 'GET' && r.path.startsWith('/v1/predictions/'));
    assert.equal(polls.length, 8, 'four polls per prediction: three processing, then succeeded');
    assert.ok(polls.every((p) => p.headers.authorization === `Bearer ${REPLICATE_MEDIA_KEY}`));
    for (const id of new Set(polls.map((p) => p.path.split('/').pop()!))) assert.deepEqual(fake.walks.get(id), ['starting', 'processing', 'processing', 'processing', 'succeeded']);
  });

  test('url: the prediction\'s file URLs pass as they are; metered as images', async () => {
    const requestId = 'replicate-img-url';
    const response = await fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify({ model: 'flux', prompt: 'a fox', n: 2 }),
    });
    const body = await response.json() as { data: Array<{ url: string }> };
    assert.equal(response.status, 200, JSON.stringify(body));
    assert.equal(response.headers.get('x-provider'), 'replicate');
    assert.deepEqual(creations()[0]!.json.input, { prompt: 'a fox', output_format: 'png', num_outputs: 2 });
    const id = sent().find((r) => r.method === 'GET')!.path.split('/').pop();
    assert.deepEqual(body.data.map((d) => d.url), [`${fake.origin}/files/${id}-0.png`, `${fake.origin}/files/${id}-1.png`]);
    assert.equal(sent().filter((r) => r.path.startsWith('/files/')).length, 0, 'nothing downloaded');
    const [record] = await recordsOf(gw, requestId);
    assert.equal(record!.provider, 'replicate');
    assert.equal(Number(record!.images), 2);
    assert.equal(Number(record!.cost_usd), 0.006);
  });

  test('/image-progress: the percentages of the logs\' progress bars, across the calls of a split request', async () => {
    const follow = async (requestId: string, n: number) => {
      const ws = new WebSocket(`${gw.url.replace(/^http/, 'ws')}/image-progress?request_id=${requestId}`, { headers: { authorization: `Bearer ${key}` } });
      const received: Array<{ status: string; progress: number }> = [];
      ws.on('message', (data) => received.push(JSON.parse(data.toString())));
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      const response = await fetch(`${gw.url}/v1/images/generations`, {
        method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': requestId },
        body: JSON.stringify({ model: 'flux', prompt: 'p', n }),
      });
      assert.equal(response.status, 200);
      await response.arrayBuffer();
      ws.close();
      return received;
    };
    // The starting answer has no bar yet; the processing ones print 25%, 50%, 75%.
    assert.deepEqual((await follow('replicate-progress-1', 1)).map((m) => [m.status, m.progress]), [['in_progress', 25], ['in_progress', 50], ['in_progress', 75], ['completed', 100]]);
    // Two predictions: each one's share is half of the whole.
    assert.deepEqual((await follow('replicate-progress-2', 5)).map((m) => m.progress), [13, 25, 38, 63, 75, 88, 100]);
  });

  test('a size near none of the model\'s aspect ratios is refused before any call; a failed prediction is a 502 with its error', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const refused = await postJson(`${gw.url}/v1/images/generations`, { model: 'flux', prompt: 'p', size: '4000x1000' }, auth);
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.match(refused.body.error.message, /size 4000x1000/);
    assert.equal(sent().length, 0);
    fake.failWith = 'NSFW content detected. Try running it again, or try a different prompt.';
    const failed = await postJson(`${gw.url}/v1/images/generations`, { model: 'flux', prompt: 'p' }, auth);
    assert.equal(failed.status, 502);
    assert.equal(failed.body.error.code, 'UPSTREAM_ERROR');
    assert.match(failed.body.error.message, /NSFW content detected/);
  });
});
