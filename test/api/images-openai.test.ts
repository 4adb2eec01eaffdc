/**
 * POST /v1/images/generations through a real gateway on the OpenAI-shaped image providers (OpenAI, Azure OpenAI,
 * Together, DeepInfra, nscale, xAI, Recraft), against a loopback fake of their wire shapes: the official `openai`
 * client's images.generate, the request each provider received (path, credential, body fields), n split by each
 * provider's or model's cap, url and b64_json both ways round (a URL answer downloaded for b64_json, bytes turned
 * into a data: URL for url), revised prompts, refusals before any upstream call, upstream errors, and the usage
 * record: images at the size and quality asked and their price, GPT image tokens and their cost.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { PNG_B64, startFakeImages, type FakeImages } from '../fakes/images.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { recordsOf } from '../helpers/usage.ts';

const config = (origin: string) => `
providers:
  openai: { baseUrl: ${origin}/v1, apiKey: sk-upstream }
  azure-openai:
    baseUrl: ${origin}/azure/openai
    apiKey: azure-key
    options: { deployments: { dall-e-3: dalle-prod } }
  together-ai: { baseUrl: ${origin}/together/v1, apiKey: together-key }
  deepinfra: { baseUrl: ${origin}/deepinfra/v1/openai, apiKey: di-key }
  nscale: { baseUrl: ${origin}/nscale/v1, apiKey: ns-key }
  xai: { baseUrl: ${origin}/xai/v1, apiKey: xai-key }
  recraft: { baseUrl: ${origin}/recraft/v1, apiKey: rc-key }
models:
  - id: dalle3
    provider: openai
    upstreamModel: dall-e-3
    pricing: { image: { default: 0.04, hd/1024x1024: 0.08, 1792x1024: 0.08 } }
  - { id: dalle2, provider: openai, upstreamModel: dall-e-2, pricing: { image: 0.02 } }
  - { id: gpt-image, provider: openai, upstreamModel: gpt-image-1, pricing: { input: 5, output: 40 } }
  - { id: azure-dalle, provider: azure-openai, upstreamModel: dall-e-3 }
  - { id: flux-together, provider: together-ai, upstreamModel: black-forest-labs/FLUX.1-schnell }
  - { id: flux-deepinfra, provider: deepinfra, upstreamModel: black-forest-labs/FLUX-1-schnell }
  - { id: flux-nscale, provider: nscale, upstreamModel: black-forest-labs/FLUX.1-schnell }
  - { id: grok-image, provider: xai, upstreamModel: grok-2-image }
  - { id: recraft, provider: recraft, upstreamModel: recraftv3, pricing: { image: 0.04 } }
routing:
  retries: 0
pipelines:
  - name: images
    routes: [/v1/images/generations]
    plugins: [auth, { usage: { flushIntervalMs: 10 } }]
`;

describe('image generation on the OpenAI-shaped providers', () => {
  let fake: FakeImages;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;
  /** The calls made since `from` (an index into fake.calls). */
  const since = (from: number) => fake.calls.slice(from);
  const withId = (id: string) => ({ headers: { 'x-request-id': id } });

  before(async () => {
    fake = await startFakeImages();
    gw = await startTestGateway(config(fake.origin));
    key = await gw.createKey({ scopes: { capabilities: ['images'] } });
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('OpenAI dall-e-3: n 3 is three calls of one (its own cap); URLs and revised prompts pass; metered at hd/1024x1024', async () => {
    const from = fake.calls.length;
    const answer = await client.images.generate(
      { model: 'dalle3', prompt: 'a lighthouse', n: 3, size: '1024x1024', quality: 'hd', style: 'natural', user: 'end-user-1', response_format: 'url' },
      withId('img-openai-dalle3'));
    assert.equal(answer.data?.length, 3);
    for (const image of answer.data!) {
      assert.match(image.url!, new RegExp(`^${fake.origin}/files/\\d+\\.png$`));
      assert.equal(image.revised_prompt, 'a lighthouse, revised 1');
      assert.equal(image.b64_json, undefined);
    }
    const calls = since(from);
    assert.equal(calls.length, 3);
    for (const call of calls) {
      assert.equal(call.path, '/v1/images/generations');
      assert.equal(call.headers.authorization, 'Bearer sk-upstream');
      assert.deepEqual(call.body, { model: 'dall-e-3', prompt: 'a lighthouse', n: 1, size: '1024x1024', quality: 'hd', style: 'natural', user: 'end-user-1', response_format: 'url' });
    }
    assert.equal(fake.downloads.length, 0, 'URLs the caller asked for are not fetched');
    const [record] = await recordsOf(gw, 'img-openai-dalle3');
    assert.equal(record!.modality, 'image');
    assert.equal(record!.provider, 'openai');
    assert.equal(Number(record!.images), 3);
    assert.equal(Number(record!.cost_usd), 0.24);
  });

  test('OpenAI dall-e-2: n 5 in one call, b64_json asked for and passed through; priced per image', async () => {
    const from = fake.calls.length;
    const answer = await client.images.generate({ model: 'dalle2', prompt: 'a fox', n: 5, response_format: 'b64_json' }, withId('img-openai-dalle2'));
    assert.deepEqual(answer.data!.map((image) => image.b64_json), Array(5).fill(PNG_B64));
    assert.deepEqual(since(from).map((call) => call.body), [{ model: 'dall-e-2', prompt: 'a fox', n: 5, response_format: 'b64_json' }]);
    const [record] = await recordsOf(gw, 'img-openai-dalle2');
    assert.equal(Number(record!.images), 5);
    assert.equal(Number(record!.cost_usd), 0.1);
  });

  test('OpenAI gpt-image-1: no response_format sent; its base64 becomes a data: URL for url; its tokens are recorded and priced', async () => {
    const from = fake.calls.length;
    const answer = await client.images.generate({ model: 'gpt-image', prompt: 'a fox', n: 2, quality: 'high', size: '1024x1536' }, withId('img-openai-gpt'));
    assert.deepEqual(answer.data!.map((image) => image.url), Array(2).fill(`data:image/png;base64,${PNG_B64}`));
    assert.deepEqual(since(from).map((call) => call.body), [{ model: 'gpt-image-1', prompt: 'a fox', n: 2, size: '1024x1536', quality: 'high' }]);
    const [record] = await recordsOf(gw, 'img-openai-gpt');
    assert.equal(Number(record!.images), 2);
    assert.equal(Number(record!.prompt_tokens), 20);
    assert.equal(Number(record!.completion_tokens), 1000);
    assert.equal(Number(record!.cost_usd), (20 * 5 + 1000 * 40) / 1e6);
  });

  test('Azure OpenAI: the deployment path with api-version, the api-key header; dall-e-3 split one per call', async () => {
    const from = fake.calls.length;
    const answer = await client.images.generate({ model: 'azure-dalle', prompt: 'a fox', n: 2, response_format: 'b64_json' });
    assert.equal(answer.data!.length, 2);
    const calls = since(from);
    assert.deepEqual(calls.map((call) => call.path), Array(2).fill('/azure/openai/deployments/dalle-prod/images/generations?api-version=2024-10-21'));
    assert.equal(calls[0]!.headers['api-key'], 'azure-key');
    assert.equal(calls[0]!.headers.authorization, undefined);
    assert.deepEqual(calls[0]!.body, { model: 'dall-e-3', prompt: 'a fox', n: 1, response_format: 'b64_json' });
  });

  test('Together: n 6 is 4 + 2, the size as width and height, base64 for b64_json; quality refused before any call', async () => {
    const from = fake.calls.length;
    const answer = await client.images.generate({ model: 'flux-together', prompt: 'a fox', n: 6, size: '1024x768', response_format: 'b64_json' });
    assert.deepEqual(answer.data!.map((image) => image.b64_json), Array(6).fill(PNG_B64));
    const calls = since(from);
    assert.deepEqual(calls.map((call) => call.path), ['/together/v1/images/generations', '/together/v1/images/generations']);
    assert.equal(calls[0]!.headers.authorization, 'Bearer together-key');
    assert.deepEqual(calls.map((call) => call.body), [4, 2].map((n) => ({ model: 'black-forest-labs/FLUX.1-schnell', prompt: 'a fox', n, width: 1024, height: 768, response_format: 'base64' })));
    const refused = await postJson(`${gw.url}/v1/images/generations`, { model: 'flux-together', prompt: 'a fox', quality: 'hd' }, { authorization: `Bearer ${key}` });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.match(refused.body.error.message, /quality/);
    assert.equal(fake.calls.length, from + 2, 'the refusal reached no provider');
  });

  test('DeepInfra: b64_json asked for whatever the caller wants (its one format); the caller\'s url is a data: URL', async () => {
    const from = fake.calls.length;
    const answer = await client.images.generate({ model: 'flux-deepinfra', prompt: 'a fox', size: '512x512', response_format: 'url' });
    assert.equal(answer.data![0]!.url, `data:image/png;base64,${PNG_B64}`);
    const [call] = since(from);
    assert.equal(call!.path, '/deepinfra/v1/openai/images/generations');
    assert.equal(call!.headers.authorization, 'Bearer di-key');
    assert.deepEqual(call!.body, { model: 'black-forest-labs/FLUX-1-schnell', prompt: 'a fox', n: 1, size: '512x512', response_format: 'b64_json' });
  });

  test('nscale: model, prompt, size and n only', async () => {
    const from = fake.calls.length;
    const answer = await client.images.generate({ model: 'flux-nscale', prompt: 'a fox', n: 2, size: '512x512', user: 'u', response_format: 'b64_json' });
    assert.equal(answer.data!.length, 2);
    const [call] = since(from);
    assert.equal(call!.path, '/nscale/v1/images/generations');
    assert.equal(call!.headers.authorization, 'Bearer ns-key');
    assert.deepEqual(call!.body, { model: 'black-forest-labs/FLUX.1-schnell', prompt: 'a fox', n: 2, size: '512x512' });
  });

  test('xAI: its data-URL bytes come back as plain base64 with the revised prompt; size refused before any call', async () => {
    const from = fake.calls.length;
    const answer = await client.images.generate({ model: 'grok-image', prompt: 'a fox', n: 2, response_format: 'b64_json' });
    assert.deepEqual(answer.data!.map((image) => [image.b64_json, image.revised_prompt]), [[PNG_B64, 'a fox, revised 1'], [PNG_B64, 'a fox, revised 2']]);
    const [call] = since(from);
    assert.equal(call!.path, '/xai/v1/images/generations');
    assert.equal(call!.headers.authorization, 'Bearer xai-key');
    assert.deepEqual(call!.body, { model: 'grok-2-image', prompt: 'a fox', n: 2, response_format: 'b64_json' });
    for (const field of [{ size: '1024x1024' }, { style: 'vivid' }, { quality: 'hd' }]) {
      const refused = await postJson(`${gw.url}/v1/images/generations`, { model: 'grok-image', prompt: 'a fox', ...field }, { authorization: `Bearer ${key}` });
      assert.equal(refused.status, 400, JSON.stringify(field));
      assert.equal(refused.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
    }
    assert.equal(fake.calls.length, from + 1);
  });

  test('Recraft: n 8 is 6 + 2 with the Recraft style; URLs it answers for b64_json are downloaded by the gateway', async () => {
    const from = fake.calls.length;
    const downloads = fake.downloads.length;
    // The client types style as OpenAI's two; Recraft's styles are its own.
    const style = 'digital_illustration' as OpenAI.ImageGenerateParams['style'];
    const answer = await client.images.generate({ model: 'recraft', prompt: 'urls: a fox', n: 8, style, response_format: 'b64_json' }, withId('img-recraft'));
    assert.deepEqual(answer.data!.map((image) => image.b64_json), Array(8).fill(PNG_B64));
    assert.equal(fake.downloads.length - downloads, 8, 'each URL fetched once');
    const calls = since(from);
    assert.deepEqual(calls.map((call) => call.path), ['/recraft/v1/images/generations', '/recraft/v1/images/generations']);
    assert.equal(calls[0]!.headers.authorization, 'Bearer rc-key');
    assert.deepEqual(calls.map((call) => call.body), [6, 2].map((n) => ({ model: 'recraftv3', prompt: 'urls: a fox', n, style: 'digital_illustration', response_format: 'b64_json' })));
    const [record] = await recordsOf(gw, 'img-recraft');
    assert.equal(record!.provider, 'recraft');
    assert.equal(Number(record!.images), 8);
    assert.equal(Number(record!.cost_usd), 0.32);
    const refused = await postJson(`${gw.url}/v1/images/generations`, { model: 'recraft', prompt: 'a fox', quality: 'hd' }, { authorization: `Bearer ${key}` });
    assert.equal(refused.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
  });

  test('an upstream refusal in OpenAI\'s error shape is the caller\'s 400 UPSTREAM_BAD_REQUEST, with the provider\'s message', async () => {
    const refused = await postJson(`${gw.url}/v1/images/generations`, { model: 'dalle2', prompt: 'reject me' }, { authorization: `Bearer ${key}` });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, 'UPSTREAM_BAD_REQUEST');
    assert.match(refused.body.error.message, /safety system/);
  });
});
