/**
 * The Stability AI image translator against the loopback fake: the form it sends (fields, order, endpoint by
 * upstream model), sizes read as aspect ratios or refused, style presets, the JSON answer read, and Stability's
 * error shapes (content moderation, CONTENT_FILTERED, bad requests, a refused key) mapped to gateway codes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ImageRequest } from '../../core/canonical/image.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import stability from '../../providers/stability-ai/index.ts';
import { aspectRatioOf } from '../../providers/stability-ai/image.ts';
import { PNG_BASE64, STABILITY_KEY, startFakeStability, type FakeStability } from '../fakes/stability.ts';
import { sendUpstream } from './wire.ts';

const request = (fields: Partial<ImageRequest> = {}): ImageRequest => ({ model: 'm', prompt: 'a lighthouse', n: 1, response_format: 'b64_json', ...fields });

describe('stability-ai image translator', () => {
  let fake: FakeStability;
  const target = (upstreamModel: string, options: Record<string, unknown> = {}, apiKey = STABILITY_KEY): ProviderTarget =>
    ({ slug: 'stability-ai', baseUrl: fake.baseUrl, apiKey, headers: {}, options, upstreamModel });
  const translator = stability.image!;

  /** Sends a request the way the exchange does: an error answer goes through mapError. */
  async function call(req: ImageRequest, t: ProviderTarget) {
    const answer = await sendUpstream(t.baseUrl, translator.toUpstream(req, t));
    if (answer.status >= 400) throw stability.mapError(answer.status, answer.body, t);
    return translator.fromUpstream(answer.body, t, req);
  }

  before(async () => { fake = await startFakeStability(); });
  after(async () => { await fake?.close(); });

  test('one image per call: the capability says so, and no follow-up is needed', () => {
    assert.equal(stability.capabilities.image?.maxImages, 1);
    assert.equal(translator.followUp, undefined);
  });

  test('core: a form with the prompt, the ratio of the size, the style preset and png; the bearer key and accept json', async () => {
    const answer = await call(request({ size: '1792x1008', style: 'cinematic' }), target('core', { negativePrompt: 'blur', seed: 42 }));
    assert.deepEqual(answer, { images: [{ b64_json: PNG_BASE64, mimeType: 'image/png' }] });
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.path, '/v2beta/stable-image/generate/core');
    assert.deepEqual(sent.fields, [['prompt', 'a lighthouse'], ['negative_prompt', 'blur'], ['aspect_ratio', '16:9'], ['seed', '42'], ['output_format', 'png'], ['style_preset', 'cinematic']]);
    assert.equal(sent.headers.authorization, `Bearer ${STABILITY_KEY}`);
    assert.equal(sent.headers.accept, 'application/json');
    assert.match(String(sent.headers['content-type']), /^multipart\/form-data; boundary=/);
  });

  test('the endpoint from the upstream model: ultra, stable-image-ultra, and sd3 models with their model field', async () => {
    for (const [model, path] of [['ultra', 'ultra'], ['stable-image-ultra', 'ultra'], ['stable-image-core', 'core']] as const) {
      await call(request(), target(model, { outputFormat: 'webp' }));
      assert.equal(fake.requests.at(-1)!.path, `/v2beta/stable-image/generate/${path}`);
      assert.deepEqual(fake.requests.at(-1)!.fields, [['prompt', 'a lighthouse'], ['output_format', 'webp']]);
    }
    const jpeg = await call(request({ size: '1024x1024' }), target('sd3.5-large-turbo', { outputFormat: 'jpeg' }));
    assert.equal(jpeg.images[0]!.mimeType, 'image/jpeg');
    assert.equal(fake.requests.at(-1)!.path, '/v2beta/stable-image/generate/sd3');
    assert.deepEqual(fake.requests.at(-1)!.fields, [['prompt', 'a lighthouse'], ['aspect_ratio', '1:1'], ['output_format', 'jpeg'], ['model', 'sd3.5-large-turbo']]);
    assert.throws(() => translator.toUpstream(request(), target('sd3.5-medium', { outputFormat: 'webp' })), (e: GatewayError) => e.code === 'CAPABILITY_NOT_SUPPORTED');
    assert.throws(() => translator.toUpstream(request(), target('dall-e-3')), (e: GatewayError) => e.code === 'UPSTREAM_BAD_REQUEST' && /not core, ultra or an sd3 model/.test(e.message));
  });

  test('sizes become ratios within 1%; a size of no Stability ratio and an unknown style are refused (CAPABILITY_NOT_SUPPORTED) before any I/O', () => {
    assert.equal(aspectRatioOf('1024x1024', target('core')), '1:1');
    assert.equal(aspectRatioOf('1366x768', target('core')), '16:9', '1.7786 against 1.7778');
    assert.equal(aspectRatioOf('768x1792', target('core')), '9:21');
    const count = fake.requests.length;
    for (const size of ['1792x1024', '832x1216']) {
      assert.throws(() => translator.toUpstream(request({ size }), target('core')), (e: GatewayError) => e.code === 'CAPABILITY_NOT_SUPPORTED' && /size/.test(e.message) && (e.details as { parameters: string[] }).parameters[0] === 'size', size);
    }
    assert.throws(() => translator.toUpstream(request({ size: '1792x1024' }), target('core')), /\(7:4\) has no Stability aspect ratio/);
    assert.throws(() => translator.toUpstream(request({ style: 'vivid' }), target('core')), (e: GatewayError) => e.code === 'CAPABILITY_NOT_SUPPORTED' && /not a Stability style preset/.test(e.message));
    assert.throws(() => translator.toUpstream(request({ quality: 'hd' }), target('core')), (e: GatewayError) => e.code === 'CAPABILITY_NOT_SUPPORTED' && /quality/.test(e.message));
    assert.equal(fake.requests.length, count);
  });

  test('errors: content moderation (403) is the prompt refused, not the credential; CONTENT_FILTERED is a clear refusal; the rest by status', async () => {
    await assert.rejects(call(request({ prompt: 'something forbidden' }), target('core')), (e: GatewayError) => {
      assert.equal(e.code, 'UPSTREAM_BAD_REQUEST');
      assert.equal(e.status, 400);
      assert.match(e.message, /refused by Stability's content moderation: Your request was flagged/);
      assert.equal((e.details as { upstreamStatus: number }).upstreamStatus, 403);
      return true;
    });
    await assert.rejects(call(request({ prompt: 'a blurred thing' }), target('ultra')), (e: GatewayError) => {
      assert.equal(e.code, 'UPSTREAM_BAD_REQUEST');
      assert.match(e.message, /withheld by Stability's content filter \(finish_reason CONTENT_FILTERED\)/);
      return true;
    });
    await assert.rejects(call(request(), target('core', {}, 'wrong')), (e: GatewayError) => e.code === 'UPSTREAM_ERROR' && /refused the gateway's credential: unauthorized: authorization: invalid/.test(e.message));
    await assert.rejects(call(request({ prompt: '' }), target('core')), (e: GatewayError) => e.code === 'UPSTREAM_BAD_REQUEST' && /bad_request: prompt: is required/.test(e.message));
    const limited = stability.mapError(429, { id: 'x', name: 'rate_limit_exceeded', errors: ['You have exceeded the rate limit'] }, target('core'));
    assert.equal(limited.code, 'UPSTREAM_RATE_LIMITED');
    const down = stability.mapError(500, { id: 'x', name: 'internal_error', errors: ['An unexpected server error occurred'] }, target('core'));
    assert.equal(down.code, 'UPSTREAM_ERROR');
    assert.match(down.message, /internal_error: An unexpected server error/);
    assert.throws(() => translator.fromUpstream({ finish_reason: 'SUCCESS' }, target('core'), request()), (e: GatewayError) => e.code === 'UPSTREAM_ERROR');
  });
});
