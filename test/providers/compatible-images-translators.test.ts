/**
 * The image translators of the OpenAI-compatible hosts with image APIs of their own, against the requests and
 * answers their documentation shows: the path under each base URL, the credential, the body fields the canonical
 * request maps to, the answer's images (URL or bytes), the images per call, and the refusals before any I/O.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ImageRequest } from '../../core/canonical/image.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { compatibleProviderBySlug } from '../../providers/openai-compatible/index.ts';

const target = (slug: string, upstreamModel: string, options: Record<string, unknown> = {}): ProviderTarget => ({
  slug, baseUrl: `https://${slug}.example/v1`, apiKey: `${slug}-key`, headers: {}, options, upstreamModel,
});
const ask = (extra: Partial<ImageRequest> = {}): ImageRequest => ({ model: 'm', prompt: 'a lighthouse at dusk', n: 1, response_format: 'url', ...extra });

function translate(slug: string, model: string, request: ImageRequest, options: Record<string, unknown> = {}) {
  const provider = compatibleProviderBySlug(slug);
  const upstream = provider.image!.toUpstream(request, target(slug, model, options));
  return { provider, upstream, body: JSON.parse(upstream.body!) as Record<string, unknown> };
}

function refused(slug: string, model: string, request: ImageRequest, parameter: string): void {
  assert.throws(() => compatibleProviderBySlug(slug).image!.toUpstream(request, target(slug, model)), (err: unknown) => {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.deepEqual((err.details as { parameters: string[] }).parameters, [parameter]);
    return true;
  });
}

describe('image translators of the OpenAI-compatible hosts', () => {
  test('each declares image with the images one call makes', () => {
    const perCall = Object.fromEntries(['fireworks-ai', 'hyperbolic', 'volcengine', 'zhipu', 'siliconflow', 'nebius']
      .map((slug) => [slug, compatibleProviderBySlug(slug).capabilities.image?.maxImages]));
    assert.deepEqual(perCall, { 'fireworks-ai': 1, hyperbolic: 1, volcengine: 1, zhipu: 1, siliconflow: 4, nebius: 1 });
  });

  test('fireworks-ai: the FLUX workflow under the inference base, JSON asked for, size as an aspect ratio, PNG base64 back', () => {
    const { provider, upstream, body } = translate('fireworks-ai', 'flux-1-schnell-fp8', ask({ size: '1792x1008' }));
    assert.equal(upstream.path, '/workflows/accounts/fireworks/models/flux-1-schnell-fp8/text_to_image');
    assert.equal(upstream.headers.accept, 'application/json');
    assert.equal(upstream.headers.authorization, 'Bearer fireworks-ai-key');
    assert.deepEqual(body, { prompt: 'a lighthouse at dusk', aspect_ratio: '16:9' });
    assert.equal(translate('fireworks-ai', 'accounts/me/models/my-flux', ask()).upstream.path, '/workflows/accounts/me/models/my-flux/text_to_image');
    const answer = provider.image!.fromUpstream({ id: '1', base64: ['data:image/png;base64,iVBORw0K', 'AAAA'], finishReason: 'SUCCESS', seed: 7 }, target('fireworks-ai', 'f'), ask());
    assert.deepEqual(answer.images, [{ b64_json: 'iVBORw0K', mimeType: 'image/png' }, { b64_json: 'AAAA', mimeType: 'image/png' }]);
    assert.throws(() => provider.image!.fromUpstream({ base64: [], finishReason: 'CONTENT_FILTERED', seed: 1 }, target('fireworks-ai', 'f'), ask()), /filtered/);
    refused('fireworks-ai', 'flux-1-dev-fp8', ask({ size: '1792x1024' }), 'size');
    refused('fireworks-ai', 'flux-1-dev-fp8', ask({ quality: 'hd' }), 'quality');
    refused('fireworks-ai', 'flux-1-dev-fp8', ask({ style: 'vivid' }), 'style');
  });

  test('hyperbolic: /image/generation with model_name, width and height; base64 images back', () => {
    const { provider, upstream, body } = translate('hyperbolic', 'FLUX.1-dev', ask({ size: '1024x768', user: 'someone' }));
    assert.equal(upstream.path, '/image/generation');
    assert.equal(upstream.headers.authorization, 'Bearer hyperbolic-key');
    assert.deepEqual(body, { model_name: 'FLUX.1-dev', prompt: 'a lighthouse at dusk', width: 1024, height: 768 });
    const answer = provider.image!.fromUpstream({ images: [{ index: 0, image: 'iVBORw0K' }] }, target('hyperbolic', 'x'), ask());
    assert.deepEqual(answer.images, [{ b64_json: 'iVBORw0K', mimeType: 'image/png' }]);
    assert.throws(() => provider.image!.fromUpstream({ images: [] }, target('hyperbolic', 'x'), ask()), /images\[\]/);
    refused('hyperbolic', 'SDXL1.0-base', ask({ quality: 'hd' }), 'quality');
    // The default quality asks for nothing a host lacks.
    assert.deepEqual(translate('hyperbolic', 'SDXL1.0-base', ask({ quality: 'standard' })).body, { model_name: 'SDXL1.0-base', prompt: 'a lighthouse at dusk' });
  });

  test('volcengine: OpenAI\'s path and format, the caller\'s response_format, no watermark unless the option asks', () => {
    const { provider, upstream, body } = translate('volcengine', 'doubao-seedream-3-0-t2i-250415', ask({ size: '1024x1024', response_format: 'b64_json' }));
    assert.equal(upstream.path, '/images/generations');
    assert.deepEqual(body, { model: 'doubao-seedream-3-0-t2i-250415', prompt: 'a lighthouse at dusk', size: '1024x1024', response_format: 'b64_json', watermark: false });
    assert.equal(translate('volcengine', 'ep-1', ask(), { imageWatermark: true }).body.watermark, true);
    const answer = provider.image!.fromUpstream({ model: 'm', created: 1, data: [{ url: 'https://ark.example/i.jpeg', size: '1024x1024' }], usage: { generated_images: 1 } }, target('volcengine', 'm'), ask());
    assert.deepEqual(answer.images, [{ url: 'https://ark.example/i.jpeg' }]);
    assert.throws(() => provider.image!.fromUpstream({ data: [{ error: { code: 'OutputImageSensitiveContentDetected', message: 'sensitive' } }] }, target('volcengine', 'm'), ask()), /sensitive/);
    refused('volcengine', 'm', ask({ style: 'natural' }), 'style');
  });

  test('zhipu: size, quality standard or hd, user_id of 6 to 128 characters; URLs back', () => {
    const { provider, upstream, body } = translate('zhipu', 'cogview-4-250304', ask({ size: '768x1344', quality: 'hd', user: 'user-123' }));
    assert.equal(upstream.path, '/images/generations');
    assert.deepEqual(body, { model: 'cogview-4-250304', prompt: 'a lighthouse at dusk', size: '768x1344', quality: 'hd', user_id: 'user-123' });
    assert.equal(translate('zhipu', 'cogview-3-flash', ask({ user: 'u1' })).body.user_id, undefined);
    assert.equal(translate('zhipu', 'cogview-3-flash', ask({ quality: 'auto' })).body.quality, undefined);
    const answer = provider.image!.fromUpstream({ created: 1, data: [{ url: 'https://bigmodel.example/a.png' }], content_filter: [{ role: 'assistant', level: 3 }] }, target('zhipu', 'c'), ask());
    assert.deepEqual(answer.images, [{ url: 'https://bigmodel.example/a.png' }]);
    refused('zhipu', 'cogview-4', ask({ quality: 'high' }), 'quality');
    refused('zhipu', 'cogview-4', ask({ style: 'vivid' }), 'style');
  });

  test('siliconflow: image_size, batch_size for several Kolors images; several from another model refused', () => {
    const { provider, upstream, body } = translate('siliconflow', 'Kwai-Kolors/Kolors', ask({ n: 3, size: '960x1280' }));
    assert.equal(upstream.path, '/images/generations');
    assert.deepEqual(body, { model: 'Kwai-Kolors/Kolors', prompt: 'a lighthouse at dusk', image_size: '960x1280', batch_size: 3 });
    assert.deepEqual(translate('siliconflow', 'Qwen/Qwen-Image', ask()).body, { model: 'Qwen/Qwen-Image', prompt: 'a lighthouse at dusk' });
    const answer = provider.image!.fromUpstream({ images: [{ url: 'https://sf.example/1.png' }, { url: 'https://sf.example/2.png' }], timings: { inference: 1.2 }, seed: 5 }, target('siliconflow', 'k'), ask());
    assert.deepEqual(answer.images, [{ url: 'https://sf.example/1.png' }, { url: 'https://sf.example/2.png' }]);
    refused('siliconflow', 'Qwen/Qwen-Image', ask({ n: 2 }), 'n');
    refused('siliconflow', 'Kwai-Kolors/Kolors', ask({ quality: 'hd' }), 'quality');
  });

  test('nebius: width and height, the caller\'s response_format, PNG asked for', () => {
    const { provider, upstream, body } = translate('nebius', 'black-forest-labs/flux-schnell', ask({ size: '512x512', response_format: 'b64_json' }));
    assert.equal(upstream.path, '/images/generations');
    assert.deepEqual(body, { model: 'black-forest-labs/flux-schnell', prompt: 'a lighthouse at dusk', width: 512, height: 512, response_format: 'b64_json', response_extension: 'png' });
    const answer = provider.image!.fromUpstream({ id: 'x', data: [{ b64_json: 'iVBORw0K', url: null }] }, target('nebius', 'n'), ask());
    assert.deepEqual(answer.images, [{ b64_json: 'iVBORw0K', mimeType: 'image/png' }]);
    refused('nebius', 'black-forest-labs/flux-dev', ask({ size: 'auto' }), 'size');
    refused('nebius', 'black-forest-labs/flux-dev', ask({ quality: 'hd' }), 'quality');
  });
});
