/**
 * The OpenAI-shaped image translators, against recorded request and answer bodies of each provider's docs:
 * OpenAI (dall-e-2/3 and the GPT image models), Azure's deployment path, the compatible hosts (Together, DeepInfra,
 * nscale, xAI) and Recraft: path, credential, body fields, refusals before any I/O, per-call caps, and the answer
 * as the provider gave it (URL or bytes with their type, revised prompts, GPT image tokens).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ImageRequest } from '../../core/canonical/image.ts';
import type { ProviderDefinition, ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { builtInProviders } from '../../providers/index.ts';

const provider = (slug: string): ProviderDefinition => builtInProviders.find((p) => p.slug === slug)!;

const target = (slug: string, upstreamModel: string, options: Record<string, unknown> = {}): ProviderTarget => ({
  slug, baseUrl: 'http://upstream.test/v1', apiKey: `${slug}-key`, headers: {}, options, upstreamModel,
});

const request = (fields: Partial<ImageRequest> = {}): ImageRequest => ({ model: 'alias', prompt: 'a red fox', n: 1, response_format: 'url', ...fields });

function sent(slug: string, model: string, fields: Partial<ImageRequest> = {}, options: Record<string, unknown> = {}) {
  const built = provider(slug).image!.toUpstream(request(fields), target(slug, model, options));
  return { ...built, json: JSON.parse(built.body!) as Record<string, unknown> };
}

function refusal(run: () => unknown, code: string, ...names: string[]): void {
  assert.throws(run, (err: unknown) => {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.code, code);
    assert.equal(err.status, 400);
    for (const name of names) assert.match(err.message, new RegExp(name));
    return true;
  });
}

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==';
const JPEG = '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAA==';

describe('OpenAI images', () => {
  test('dall-e-3: every field as asked, response_format included; one image per call', () => {
    const up = sent('openai', 'dall-e-3', { size: '1792x1024', quality: 'hd', style: 'natural', user: 'u-1', response_format: 'b64_json' });
    assert.equal(up.method, 'POST');
    assert.equal(up.path, '/images/generations');
    assert.equal(up.headers.authorization, 'Bearer openai-key');
    assert.equal(up.headers['content-type'], 'application/json');
    assert.deepEqual(up.json, { model: 'dall-e-3', prompt: 'a red fox', n: 1, size: '1792x1024', quality: 'hd', style: 'natural', user: 'u-1', response_format: 'b64_json' });
    assert.equal(provider('openai').image!.maxImages!(target('openai', 'dall-e-3')), 1);
    assert.equal(provider('openai').image!.maxImages!(target('openai', 'dall-e-2')), undefined);
    assert.equal(provider('openai').capabilities.image?.maxImages, undefined, 'OpenAI makes up to 10 per call');
  });

  test('gpt-image-1: no response_format (it answers base64 and rejects the field); organization and project headers', () => {
    const up = sent('openai', 'gpt-image-1', { n: 3, quality: 'high', size: '1536x1024' }, { organization: 'org-1', project: 'proj-1' });
    assert.deepEqual(up.json, { model: 'gpt-image-1', prompt: 'a red fox', n: 3, size: '1536x1024', quality: 'high' });
    assert.equal(up.headers['openai-organization'], 'org-1');
    assert.equal(up.headers['openai-project'], 'proj-1');
    assert.equal(provider('openai').image!.maxImages!(target('openai', 'gpt-image-1')), undefined);
  });

  test('answers: URLs with revised prompts; bytes with their type from output_format or their first bytes; GPT image tokens', () => {
    const image = provider('openai').image!;
    const t = target('openai', 'dall-e-3');
    assert.deepEqual(image.fromUpstream({ created: 1, data: [{ url: 'https://cdn.test/a.png', revised_prompt: 'A red fox, detailed' }] }, t, request()), {
      images: [{ url: 'https://cdn.test/a.png', revised_prompt: 'A red fox, detailed' }],
    });
    const gpt = image.fromUpstream({
      created: 1, output_format: 'webp', data: [{ b64_json: 'AAAA' }, { b64_json: 'BBBB' }],
      usage: { input_tokens: 50, output_tokens: 4160, total_tokens: 4210, input_tokens_details: { text_tokens: 50, image_tokens: 0 } },
    }, target('openai', 'gpt-image-1'), request());
    assert.deepEqual(gpt, {
      images: [{ b64_json: 'AAAA', mimeType: 'image/webp' }, { b64_json: 'BBBB', mimeType: 'image/webp' }],
      usage: { prompt_tokens: 50, completion_tokens: 4160, total_tokens: 4210 },
    });
    assert.deepEqual(image.fromUpstream({ data: [{ b64_json: PNG }, { b64_json: JPEG }] }, t, request()).images.map((i) => i.mimeType), ['image/png', 'image/jpeg']);
    assert.deepEqual(image.fromUpstream({ error: 'nope' }, t, request()), { images: [] }, 'no data: no images (the core answers a bad upstream answer)');
  });
});

describe('Azure OpenAI images', () => {
  test('the deployment path with api-version and the api-key header, no Bearer', () => {
    const up = sent('azure-openai', 'dall-e-3', { quality: 'standard' }, { deployments: { 'dall-e-3': 'images-prod' }, apiVersion: '2025-04-01-preview' });
    assert.equal(up.path, '/deployments/images-prod/images/generations?api-version=2025-04-01-preview');
    assert.equal(up.headers['api-key'], 'azure-openai-key');
    assert.equal(up.headers.authorization, undefined);
    assert.deepEqual(up.json, { model: 'dall-e-3', prompt: 'a red fox', n: 1, quality: 'standard', response_format: 'url' });
    assert.equal(provider('azure-openai').image!.maxImages!(target('azure-openai', 'dall-e-3')), 1);
    assert.equal(sent('azure-openai', 'gpt-image-1').json.response_format, undefined);
  });
});

describe('OpenAI-compatible images', () => {
  test('Together: width and height for size, base64 for b64_json, at most 4 per call; quality and style refused; user left out', () => {
    const up = sent('together-ai', 'black-forest-labs/FLUX.1-schnell', { size: '1024x768', n: 4, response_format: 'b64_json', user: 'u-1' });
    assert.equal(up.path, '/images/generations');
    assert.equal(up.headers.authorization, 'Bearer together-ai-key');
    assert.deepEqual(up.json, { model: 'black-forest-labs/FLUX.1-schnell', prompt: 'a red fox', n: 4, width: 1024, height: 768, response_format: 'base64' });
    assert.equal(sent('together-ai', 'black-forest-labs/FLUX.1-schnell').json.response_format, 'url');
    assert.equal(provider('together-ai').capabilities.image?.maxImages, 4);
    refusal(() => sent('together-ai', 'black-forest-labs/FLUX.1-schnell', { quality: 'hd', style: 'vivid' }), 'CAPABILITY_NOT_SUPPORTED', 'quality', 'style');
    refusal(() => sent('together-ai', 'black-forest-labs/FLUX.1-schnell', { size: 'large' }), 'VALIDATION_ERROR', 'size');
    const answer = provider('together-ai').image!.fromUpstream({ id: 'x', model: 'm', object: 'list', data: [{ index: 0, b64_json: JPEG, type: 'b64_json' }] }, target('together-ai', 'm'), request());
    assert.deepEqual(answer, { images: [{ b64_json: JPEG, mimeType: 'image/jpeg' }] });
  });

  test('DeepInfra: OpenAI\'s request at its /v1/openai base, always asking for b64_json (the one format it answers)', () => {
    const up = sent('deepinfra', 'black-forest-labs/FLUX-1-schnell', { size: '512x512', style: 'vivid', n: 2 });
    assert.equal(up.path, '/images/generations');
    assert.deepEqual(up.json, { model: 'black-forest-labs/FLUX-1-schnell', prompt: 'a red fox', n: 2, size: '512x512', style: 'vivid', response_format: 'b64_json' });
    const answer = provider('deepinfra').image!.fromUpstream({ created: 1, data: [{ revised_prompt: 'a red fox', b64_json: JPEG }] }, target('deepinfra', 'm'), request());
    assert.deepEqual(answer, { images: [{ b64_json: JPEG, mimeType: 'image/jpeg', revised_prompt: 'a red fox' }] });
  });

  test('nscale: model, prompt, size and n only; quality and style refused', () => {
    const up = sent('nscale', 'black-forest-labs/FLUX.1-schnell', { size: '512x512', n: 2, response_format: 'url', user: 'u-1' });
    assert.deepEqual(up.json, { model: 'black-forest-labs/FLUX.1-schnell', prompt: 'a red fox', n: 2, size: '512x512' });
    refusal(() => sent('nscale', 'm', { style: 'vivid' }), 'CAPABILITY_NOT_SUPPORTED', 'style');
  });

  test('xAI: n and response_format as asked; size and style refused, quality too for grok-2-image; data-URL bytes unwrapped', () => {
    const up = sent('xai', 'grok-2-image', { n: 10, response_format: 'b64_json', user: 'u-1' });
    assert.equal(up.headers.authorization, 'Bearer xai-key');
    assert.deepEqual(up.json, { model: 'grok-2-image', prompt: 'a red fox', n: 10, user: 'u-1', response_format: 'b64_json' });
    assert.equal(provider('xai').capabilities.image?.maxImages, undefined);
    refusal(() => sent('xai', 'grok-2-image', { size: '1024x1024' }), 'CAPABILITY_NOT_SUPPORTED', 'size');
    refusal(() => sent('xai', 'grok-2-image', { style: 'vivid' }), 'CAPABILITY_NOT_SUPPORTED', 'style');
    refusal(() => sent('xai', 'grok-2-image', { quality: 'hd' }), 'CAPABILITY_NOT_SUPPORTED', 'quality', 'grok-2-image');
    assert.equal(sent('xai', 'grok-imagine-image', { quality: 'high' }).json.quality, 'high');
    const answer = provider('xai').image!.fromUpstream({ data: [{ b64_json: `data:image/jpeg;base64,${JPEG}`, revised_prompt: 'A fox, 3D render' }] }, target('xai', 'grok-2-image'), request());
    assert.deepEqual(answer, { images: [{ b64_json: JPEG, mimeType: 'image/jpeg', revised_prompt: 'A fox, 3D render' }] });
  });

  test('the other compatible hosts declare no images (their pairs are not done here)', () => {
    for (const slug of ['groq', 'mistral', 'openrouter']) assert.equal(provider(slug).capabilities.image, undefined, slug);
  });
});

describe('Recraft images', () => {
  test('Bearer at its base; style, size, n and response_format as asked; quality refused; user left out; 6 per call', () => {
    const recraft = provider('recraft');
    assert.equal(recraft.defaultBaseUrl, 'https://external.api.recraft.ai/v1');
    assert.equal(recraft.capabilities.image?.maxImages, 6);
    assert.equal(recraft.capabilities.chat, undefined);
    const up = sent('recraft', 'recraftv3', { style: 'digital_illustration', size: '1365x1024', n: 6, response_format: 'b64_json', user: 'u-1' });
    assert.equal(up.path, '/images/generations');
    assert.equal(up.headers.authorization, 'Bearer recraft-key');
    assert.deepEqual(up.json, { model: 'recraftv3', prompt: 'a red fox', n: 6, size: '1365x1024', style: 'digital_illustration', response_format: 'b64_json' });
    refusal(() => sent('recraft', 'recraftv3', { quality: 'hd' }), 'CAPABILITY_NOT_SUPPORTED', 'quality');
    const answer = recraft.image!.fromUpstream({
      created: 1748140800, credits: 80,
      data: [{ image_id: 'a1', url: 'https://img.recraft.test/a1.png' }, { image_id: 'b2', b64_json: 'PHN2ZyB4bWxucz0i' }],
    }, target('recraft', 'recraftv3'), request());
    assert.deepEqual(answer, { images: [{ url: 'https://img.recraft.test/a1.png' }, { b64_json: 'PHN2ZyB4bWxucz0i', mimeType: 'image/svg+xml' }] });
  });
});
