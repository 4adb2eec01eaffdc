/**
 * POST /v1/images/generations on stability-ai and runway through a real gateway, with the official `openai`
 * client's images.generate against loopback fakes of both: the multipart fields Stability receives (parsed), one
 * Stability call per image, Runway's task created with its version header and credential and read through
 * PENDING -> RUNNING -> SUCCEEDED (its progress on /image-progress), both response formats from Stability's bytes
 * and from Runway's URL, and each provider's refusals mapped to the gateway's codes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import WebSocket from 'ws';
import { PNG_BASE64, STABILITY_KEY, startFakeStability, type FakeStability } from '../fakes/stability.ts';
import { RUNWAY_KEY, RUNWAY_PNG, RUNWAY_VERSION, startFakeRunway, type FakeRunway } from '../fakes/runway.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const config = (stability: string, runway: string) => `
upstream:
  breaker:
    volumeThreshold: 1000
providers:
  stability-ai:
    baseUrl: ${stability}
    apiKey: ${STABILITY_KEY}
    options: { negativePrompt: fog }
  runway:
    baseUrl: ${runway}
    apiKey: ${RUNWAY_KEY}
    options: { pollIntervalMs: 1 }
models:
  - id: sd-core
    provider: stability-ai
    upstreamModel: core
  - id: sd35
    provider: stability-ai
    upstreamModel: sd3.5-large
  - id: gen4
    provider: runway
    upstreamModel: gen4_image
pipelines:
  - name: images
    routes: [/v1/images/generations, /image-progress]
    plugins: [auth]
`;

describe('images on stability-ai and runway', () => {
  let stability: FakeStability;
  let runway: FakeRunway;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;

  before(async () => {
    [stability, runway] = await Promise.all([startFakeStability(), startFakeRunway()]);
    gw = await startTestGateway(config(stability.baseUrl, runway.baseUrl));
    key = await gw.createKey({ scopes: { capabilities: ['images'] } });
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await Promise.all([stability?.close(), runway?.close()]);
  });

  test('stability-ai: n=3 is three form posts to the core endpoint; b64_json is Stability\'s bytes', async () => {
    const before = stability.requests.length;
    // The client's type knows OpenAI's two styles; the API takes any string, here a Stability preset.
    const style = 'analog-film' as 'vivid';
    const answer = await client.images.generate({ model: 'sd-core', prompt: 'a lighthouse at night', n: 3, size: '1024x576', style, response_format: 'b64_json' });
    assert.equal(answer.data!.length, 3);
    assert.ok(answer.data!.every((d) => d.b64_json === PNG_BASE64 && d.url === undefined));
    const sent = stability.requests.slice(before);
    assert.equal(sent.length, 3, 'one image per call');
    for (const r of sent) {
      assert.equal(r.path, '/v2beta/stable-image/generate/core');
      assert.deepEqual(r.fields, [['prompt', 'a lighthouse at night'], ['negative_prompt', 'fog'], ['aspect_ratio', '16:9'], ['output_format', 'png'], ['style_preset', 'analog-film']]);
      assert.equal(r.headers.authorization, `Bearer ${STABILITY_KEY}`);
      assert.equal(r.headers.accept, 'application/json');
      assert.match(String(r.headers['content-type']), /^multipart\/form-data; boundary=/);
    }
  });

  test('stability-ai: response_format url gives the bytes as a data: URL; sd3 models name themselves in the form', async () => {
    const answer = await client.images.generate({ model: 'sd35', prompt: 'a fox', size: '1024x1024', response_format: 'url' });
    assert.deepEqual(answer.data, [{ url: `data:image/png;base64,${PNG_BASE64}` }]);
    const sent = stability.requests.at(-1)!;
    assert.equal(sent.path, '/v2beta/stable-image/generate/sd3');
    assert.deepEqual(sent.fields, [['prompt', 'a fox'], ['negative_prompt', 'fog'], ['aspect_ratio', '1:1'], ['output_format', 'png'], ['model', 'sd3.5-large']]);
  });

  test('stability-ai refusals: a size of no Stability ratio before any call; content moderation and CONTENT_FILTERED as 400s', async () => {
    const headers = { authorization: `Bearer ${key}` };
    const count = stability.requests.length;
    const size = await postJson(`${gw.url}/v1/images/generations`, { model: 'sd-core', prompt: 'p', size: '1792x1024' }, headers);
    assert.equal(size.status, 400);
    assert.equal(size.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.match(size.body.error.message, /1792x1024 \(7:4\) has no Stability aspect ratio/);
    assert.equal(stability.requests.length, count, 'nothing sent');
    const moderated = await postJson(`${gw.url}/v1/images/generations`, { model: 'sd-core', prompt: 'something forbidden' }, headers);
    assert.equal(moderated.status, 400, JSON.stringify(moderated.body));
    assert.equal(moderated.body.error.code, 'UPSTREAM_BAD_REQUEST');
    assert.match(moderated.body.error.message, /content moderation/);
    const filtered = await postJson(`${gw.url}/v1/images/generations`, { model: 'sd-core', prompt: 'a blurred thing' }, headers);
    assert.equal(filtered.status, 400, JSON.stringify(filtered.body));
    assert.match(filtered.body.error.message, /CONTENT_FILTERED/);
  });

  test('runway: a text_to_image task with the version header and key, read PENDING -> RUNNING 0.3 -> 0.7 -> SUCCEEDED; url is Runway\'s output', async () => {
    const before = runway.requests.length;
    const answer = await client.images.generate({ model: 'gen4', prompt: 'a red circle', size: '1920x1080', response_format: 'url' });
    const [create, ...reads] = runway.requests.slice(before);
    assert.deepEqual([create!.method, create!.path, create!.json], ['POST', '/v1/text_to_image', { model: 'gen4_image', promptText: 'a red circle', ratio: '1920:1080' }]);
    const id = reads[0]!.path.split('/').at(-1)!;
    assert.deepEqual(reads.map((r) => `${r.method} ${r.path}`), Array(4).fill(`GET /v1/tasks/${id}`));
    for (const r of [create!, ...reads]) {
      assert.equal(r.headers.authorization, `Bearer ${RUNWAY_KEY}`);
      assert.equal(r.headers['x-runway-version'], RUNWAY_VERSION);
    }
    assert.deepEqual(runway.polls.filter((p) => p.id === id).map((p) => p.progress === undefined ? p.status : `${p.status} ${p.progress}`), ['PENDING', 'RUNNING 0.3', 'RUNNING 0.7', 'SUCCEEDED']);
    assert.deepEqual(answer.data, [{ url: `${runway.origin}/outputs/${id}.png` }]);
  });

  test('runway: b64_json downloads the output from Runway\'s host without the credential; n=2 is two tasks; progress on /image-progress', async () => {
    const requestId = 'runway-progress-1';
    const ws = new WebSocket(`${gw.url.replace(/^http/, 'ws')}/image-progress?request_id=${requestId}`, { headers: { authorization: `Bearer ${key}` } });
    const received: Array<{ status: string; progress: number }> = [];
    ws.on('message', (data) => received.push(JSON.parse(data.toString()) as { status: string; progress: number }));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const before = runway.requests.length;
    const answer = await client.images.generate({ model: 'gen4', prompt: 'two squares', n: 2, response_format: 'b64_json' }, { headers: { 'x-request-id': requestId } });
    assert.deepEqual(answer.data, [{ b64_json: RUNWAY_PNG.toString('base64') }, { b64_json: RUNWAY_PNG.toString('base64') }]);
    const sent = runway.requests.slice(before);
    assert.equal(sent.filter((r) => r.path === '/v1/text_to_image').length, 2);
    assert.ok(sent.filter((r) => r.path === '/v1/text_to_image').every((r) => r.json!.ratio === '1024:1024'), 'no size: 1024x1024');
    const downloads = sent.filter((r) => r.path.startsWith('/outputs/'));
    assert.equal(downloads.length, 2);
    assert.ok(downloads.every((r) => r.headers.authorization === undefined && r.headers['x-runway-version'] === undefined), 'nothing of the gateway\'s goes to the output host');
    // Two tasks of one image: the first's 30 and 70 are 15 and 35 of the whole, the second's 65 and 85.
    assert.deepEqual(received.map((m) => m.progress), [15, 35, 65, 85, 100]);
    ws.close();
  });

  test('runway refusals: a size gen4_image does not make before any call; a task failed on SAFETY is a 400', async () => {
    const headers = { authorization: `Bearer ${key}` };
    const count = runway.requests.length;
    const size = await postJson(`${gw.url}/v1/images/generations`, { model: 'gen4', prompt: 'p', size: '1792x1024' }, headers);
    assert.equal(size.status, 400);
    assert.equal(size.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.equal(runway.requests.length, count);
    const unsafe = await postJson(`${gw.url}/v1/images/generations`, { model: 'gen4', prompt: 'something unsafe' }, headers);
    assert.equal(unsafe.status, 400, JSON.stringify(unsafe.body));
    assert.equal(unsafe.body.error.code, 'UPSTREAM_BAD_REQUEST');
    assert.match(unsafe.body.error.message, /SAFETY\.INPUT\.TEXT/);
  });
});
