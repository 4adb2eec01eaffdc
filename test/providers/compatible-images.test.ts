/**
 * Image generation on the OpenAI-compatible hosts with image APIs of their own, through a real gateway against a
 * loopback fake of each host's documented wire format: the official `openai` client's images.generate, the path,
 * credential and body each host got, both response formats from URL and bytes answers (URLs downloaded without
 * the credential), n split by each host's images per call, each host's error body mapped to the gateway's codes,
 * and refusals before any upstream call.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { FAKE_PNG, startFakeImageHosts, type FakeImageHosts } from '../fakes/compatible-images.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const config = (origin: string) => `
providers:
  fireworks-ai: { baseUrl: ${origin}/fireworks/inference/v1, apiKey: fw-key }
  hyperbolic: { baseUrl: ${origin}/hyperbolic/v1, apiKey: hb-key }
  volcengine: { baseUrl: ${origin}/volcengine/api/v3, apiKey: ark-key }
  zhipu: { baseUrl: ${origin}/zhipu/api/paas/v4, apiKey: zp-key }
  siliconflow: { baseUrl: ${origin}/siliconflow/v1, apiKey: sf-key }
  nebius: { baseUrl: ${origin}/nebius/v1, apiKey: nb-key }
models:
  - { id: flux, provider: fireworks-ai, upstreamModel: flux-1-schnell-fp8 }
  - { id: hyper-flux, provider: hyperbolic, upstreamModel: FLUX.1-dev }
  - { id: seedream, provider: volcengine, upstreamModel: doubao-seedream-3-0-t2i-250415 }
  - { id: cogview, provider: zhipu, upstreamModel: cogview-4-250304 }
  - { id: kolors, provider: siliconflow, upstreamModel: Kwai-Kolors/Kolors }
  - { id: qwen-image, provider: siliconflow, upstreamModel: Qwen/Qwen-Image }
  - { id: nebius-flux, provider: nebius, upstreamModel: black-forest-labs/flux-schnell }
pipelines:
  - name: images
    routes: [/v1/images/generations]
    plugins: [auth]
`;

const PNG_B64 = FAKE_PNG.toString('base64');
const PNG_DATA_URL = `data:image/png;base64,${PNG_B64}`;

describe('image generation on the OpenAI-compatible hosts with their own image APIs', () => {
  let fake: FakeImageHosts;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;
  const since = (count: number) => fake.requests.slice(count);

  before(async () => {
    fake = await startFakeImageHosts();
    gw = await startTestGateway(config(fake.origin));
    key = await gw.createKey({ scopes: { capabilities: ['images'] } });
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('fireworks-ai: n 2 is two workflow calls under the inference base, JSON accepted, size as an aspect ratio; bytes back', async () => {
    const start = fake.requests.length;
    const answer = await client.images.generate({ model: 'flux', prompt: 'a lighthouse at dusk', n: 2, size: '1024x1024', response_format: 'b64_json' });
    assert.deepEqual(answer.data?.map((image) => image.b64_json), [PNG_B64, PNG_B64]);
    const calls = since(start);
    assert.equal(calls.length, 2);
    for (const call of calls) {
      assert.equal(call.path, '/fireworks/inference/v1/workflows/accounts/fireworks/models/flux-1-schnell-fp8/text_to_image');
      assert.equal(call.headers.authorization, 'Bearer fw-key');
      assert.equal(call.headers.accept, 'application/json');
      assert.deepEqual(call.json, { prompt: 'a lighthouse at dusk', aspect_ratio: '1:1' });
    }
    const url = await client.images.generate({ model: 'flux', prompt: 'a fox', response_format: 'url' });
    assert.equal(url.data?.[0]?.url, PNG_DATA_URL);
  });

  test('hyperbolic: model_name, width and height; its base64 becomes a data: URL for url', async () => {
    const start = fake.requests.length;
    const answer = await client.images.generate({ model: 'hyper-flux', prompt: 'a fox', size: '1024x768', response_format: 'url' });
    assert.equal(answer.data?.[0]?.url, PNG_DATA_URL);
    const [call] = since(start);
    assert.equal(call!.path, '/hyperbolic/v1/image/generation');
    assert.equal(call!.headers.authorization, 'Bearer hb-key');
    assert.deepEqual(call!.json, { model_name: 'FLUX.1-dev', prompt: 'a fox', width: 1024, height: 768 });
  });

  test('volcengine: the caller\'s response_format asked of Ark, no watermark; URL and bytes answers pass as they are', async () => {
    const start = fake.requests.length;
    const bytes = await client.images.generate({ model: 'seedream', prompt: 'a fox', size: '1024x1024', response_format: 'b64_json' });
    assert.equal(bytes.data?.[0]?.b64_json, PNG_B64);
    const url = await client.images.generate({ model: 'seedream', prompt: 'a fox' });
    assert.equal(url.data?.[0]?.url, `${fake.origin}/cdn/ark.jpeg`);
    const [first, second] = since(start);
    assert.equal(first!.path, '/volcengine/api/v3/images/generations');
    assert.equal(first!.headers.authorization, 'Bearer ark-key');
    assert.deepEqual(first!.json, { model: 'doubao-seedream-3-0-t2i-250415', prompt: 'a fox', size: '1024x1024', response_format: 'b64_json', watermark: false });
    assert.equal(second!.json!.response_format, 'url');
  });

  test('zhipu: size, quality and user_id sent; its URL downloaded without the credential for b64_json', async () => {
    const start = fake.requests.length;
    const downloads = fake.downloads.length;
    const answer = await client.images.generate({ model: 'cogview', prompt: 'a fox', size: '768x1344', quality: 'hd', user: 'caller-42', response_format: 'b64_json' });
    assert.equal(answer.data?.[0]?.b64_json, PNG_B64);
    const [call] = since(start);
    assert.equal(call!.path, '/zhipu/api/paas/v4/images/generations');
    assert.equal(call!.headers.authorization, 'Bearer zp-key');
    assert.deepEqual(call!.json, { model: 'cogview-4-250304', prompt: 'a fox', size: '768x1344', quality: 'hd', user_id: 'caller-42' });
    assert.deepEqual(fake.downloads.slice(downloads), [{ path: '/cdn/cogview.png', authorization: false }]);
  });

  test('siliconflow: n 6 on Kolors is batches of 4 and 2; several images from another model refused before any call', async () => {
    const start = fake.requests.length;
    const answer = await client.images.generate({ model: 'kolors', prompt: 'a fox', n: 6, size: '1024x1024' });
    assert.deepEqual(answer.data?.map((image) => image.url), [0, 1, 2, 3, 0, 1].map((i) => `${fake.origin}/cdn/sf-${i}.png`));
    assert.deepEqual(since(start).map((call) => [call.path, call.headers.authorization, call.json!.batch_size, call.json!.image_size]), [
      ['/siliconflow/v1/images/generations', 'Bearer sf-key', 4, '1024x1024'],
      ['/siliconflow/v1/images/generations', 'Bearer sf-key', 2, '1024x1024'],
    ]);
    const before = fake.requests.length;
    const refused = await postJson(`${gw.url}/v1/images/generations`, { model: 'qwen-image', prompt: 'a fox', n: 2 }, { authorization: `Bearer ${key}` });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.equal(fake.requests.length, before);
  });

  test('nebius: width, height, PNG and the caller\'s response_format; both formats back', async () => {
    const start = fake.requests.length;
    const bytes = await client.images.generate({ model: 'nebius-flux', prompt: 'a fox', size: '512x512', response_format: 'b64_json' });
    assert.equal(bytes.data?.[0]?.b64_json, PNG_B64);
    const url = await client.images.generate({ model: 'nebius-flux', prompt: 'a fox', response_format: 'url' });
    assert.equal(url.data?.[0]?.url, `${fake.origin}/cdn/nebius.png`);
    const [first] = since(start);
    assert.equal(first!.path, '/nebius/v1/images/generations');
    assert.equal(first!.headers.authorization, 'Bearer nb-key');
    assert.deepEqual(first!.json, { model: 'black-forest-labs/flux-schnell', prompt: 'a fox', width: 512, height: 512, response_format: 'b64_json', response_extension: 'png' });
  });

  test('each host\'s error body is the gateway\'s UPSTREAM_BAD_REQUEST with the host\'s message; a filtered FLUX image too', async () => {
    const auth = { authorization: `Bearer ${key}` };
    for (const [model, host] of [['flux', 'fireworks'], ['hyper-flux', 'hyperbolic'], ['seedream', 'volcengine'], ['cogview', 'zhipu'], ['kolors', 'siliconflow'], ['nebius-flux', 'nebius']]) {
      const failed = await postJson(`${gw.url}/v1/images/generations`, { model, prompt: 'please fail' }, auth);
      assert.equal(failed.status, 400, model);
      assert.equal(failed.body.error.code, 'UPSTREAM_BAD_REQUEST', model);
      assert.match(failed.body.error.message, new RegExp(`${host} rejected the prompt`), model);
    }
    const filtered = await postJson(`${gw.url}/v1/images/generations`, { model: 'flux', prompt: 'something forbidden' }, auth);
    assert.equal(filtered.status, 400);
    assert.match(filtered.body.error.message, /CONTENT_FILTERED/);
  });

  test('fields a host has no equivalent of are refused before any call', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const before = fake.requests.length;
    for (const body of [
      { model: 'cogview', prompt: 'a fox', style: 'vivid' },
      { model: 'cogview', prompt: 'a fox', quality: 'high' },
      { model: 'flux', prompt: 'a fox', size: '1792x1024' },
      { model: 'nebius-flux', prompt: 'a fox', quality: 'hd' },
      { model: 'hyper-flux', prompt: 'a fox', style: 'natural' },
    ]) {
      const refused = await postJson(`${gw.url}/v1/images/generations`, body, auth);
      assert.equal(refused.status, 400, JSON.stringify(body));
      assert.equal(refused.body.error.code, 'CAPABILITY_NOT_SUPPORTED', JSON.stringify(body));
    }
    assert.equal(fake.requests.length, before);
  });
});
