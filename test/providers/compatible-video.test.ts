/**
 * The video translators of the OpenAI-compatible hosts against the requests and answers their documentation
 * shows: the create request (path, credential, body), the task id and first state from the create answer, the
 * poll request, every status of a polled answer (progress, the video's URL, the seconds made, failures with their
 * reason), and the refusals made before any I/O.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import type { VideoRequest } from '../../core/canonical/video.ts';
import { exchangeJson } from '../../core/dispatch/exchange.ts';
import type { ProviderTarget, VideoTranslator } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { compatibleProviderBySlug } from '../../providers/openai-compatible/index.ts';
import { testCallDeps } from '../helpers/call-deps.ts';

const BASES: Record<string, string> = {
  'together-ai': 'https://api.together.xyz/v1', xai: 'https://api.x.ai/v1',
  zhipu: 'https://open.bigmodel.cn/api/paas/v4', volcengine: 'https://ark.cn-beijing.volces.com/api/v3',
};
const target = (slug: string, upstreamModel: string): ProviderTarget => ({
  slug, baseUrl: BASES[slug]!, apiKey: `${slug}-key`, headers: {}, options: {}, upstreamModel,
});
const ask = (extra: Partial<VideoRequest> = {}): VideoRequest => ({ model: 'm', prompt: 'a lighthouse at dusk', ...extra });
const video = (slug: string): VideoTranslator => compatibleProviderBySlug(slug).video!;

function create(slug: string, model: string, request: VideoRequest) {
  const upstream = video(slug).create(request, target(slug, model));
  assert.equal(upstream.method, 'POST');
  assert.equal(upstream.headers.authorization, `Bearer ${slug}-key`);
  assert.equal(upstream.headers['content-type'], 'application/json');
  return { path: upstream.path, body: JSON.parse(upstream.body!) as Record<string, unknown> };
}

function refused(slug: string, model: string, request: VideoRequest, parameter: string): void {
  assert.throws(() => video(slug).create(request, target(slug, model)), (err: unknown) => {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.deepEqual((err.details as { parameters: string[] }).parameters, [parameter]);
    return true;
  });
}

function pollOf(slug: string, model: string, taskId: string) {
  const request = video(slug).poll(taskId, target(slug, model));
  assert.equal(request.method, 'GET');
  assert.equal(request.headers.authorization, `Bearer ${slug}-key`);
  assert.equal(request.body, undefined);
  assert.equal(request.headers['content-type'], undefined);
  return request.path;
}

const state = (slug: string, body: unknown) => video(slug).state(body, target(slug, 'm'), 'task-1');

describe('video translators of the OpenAI-compatible hosts', () => {
  test('the four hosts declare video with a translator', () => {
    for (const slug of ['together-ai', 'xai', 'zhipu', 'volcengine']) {
      const provider = compatibleProviderBySlug(slug);
      assert.deepEqual(provider.capabilities.video, {}, slug);
      assert.equal(typeof provider.video?.create, 'function', slug);
    }
  });

  test('together-ai: /v2/videos beside the /v1 base, seconds as a string, size as width and height, the first frame as media', () => {
    const model = 'minimax/hailuo-02';
    const { path, body } = create('together-ai', model, ask({ seconds: 6, size: '1366x768', seed: 7, negative_prompt: 'rain', image: 'https://img.example/cat.png' }));
    assert.equal(path, 'https://api.together.xyz/v2/videos');
    assert.deepEqual(body, {
      model, prompt: 'a lighthouse at dusk', seconds: '6', width: 1366, height: 768, seed: 7, negative_prompt: 'rain',
      media: { frame_images: [{ input_image: 'https://img.example/cat.png', frame: 'first' }] },
    });
    assert.deepEqual(create('together-ai', model, ask({ aspect_ratio: '9:16' })).body, { model, prompt: 'a lighthouse at dusk', ratio: '9:16' });
    // A base URL of another shape (a proxy) takes the path under it.
    const proxied = video('together-ai').create(ask(), { ...target('together-ai', model), baseUrl: 'https://proxy.example/together' });
    assert.equal(proxied.path, '/videos');
    refused('together-ai', 'Wan-AI/Wan2.2-T2V-A14B', ask({ image: 'https://img.example/cat.png' }), 'image');
    refused('together-ai', model, ask({ size: '1280x720', aspect_ratio: '9:16' }), 'aspect_ratio');

    const created = video('together-ai').created({ id: '019a0068-794a', status: 'queued' }, target('together-ai', model), ask());
    assert.deepEqual(created, { taskId: '019a0068-794a', state: { status: 'queued' } });
    assert.equal(pollOf('together-ai', model, '019a0068-794a'), 'https://api.together.xyz/v2/videos/019a0068-794a');
    assert.deepEqual(state('together-ai', { id: 'x', status: 'in_progress' }), { status: 'in_progress' });
    assert.deepEqual(state('together-ai', { id: 'x', status: 'completed', seconds: '6', outputs: { cost: 0.28, video_url: 'https://api.together.ai/shrt/Dwla' } }),
      { status: 'completed', result: { url: 'https://api.together.ai/shrt/Dwla' }, seconds: 6 });
    // The documented example of a completed job carries no seconds: the asked ones are billed.
    assert.deepEqual(state('together-ai', { status: 'completed', outputs: { video_url: 'https://v.example/a.mp4' } }), { status: 'completed', result: { url: 'https://v.example/a.mp4' } });
    assert.deepEqual(state('together-ai', { status: 'failed', error: { code: 'content_policy', message: 'prompt rejected' } }), { status: 'failed', error: 'prompt rejected' });
    assert.deepEqual(state('together-ai', { status: 'failed', info: { errors: [{ message: 'GPU out of memory' }] } }), { status: 'failed', error: 'GPU out of memory' });
    assert.deepEqual(state('together-ai', { status: 'cancelled' }), { status: 'failed', error: 'the job was cancelled' });
    assert.throws(() => state('together-ai', { status: 'completed', outputs: {} }), /outputs\.video_url/);
  });

  test('xai: a deferred request at /videos/generations, size as resolution and ratio, the image as {url}, no seed or negative prompt', () => {
    const model = 'grok-imagine-video';
    const { path, body } = create('xai', model, ask({ seconds: 8, size: '854x480', image: 'data:image/png;base64,AAAA' }));
    assert.equal(path, '/videos/generations');
    assert.deepEqual(body, { model, prompt: 'a lighthouse at dusk', duration: 8, resolution: '480p', aspect_ratio: '16:9', image: { url: 'data:image/png;base64,AAAA' } });
    assert.deepEqual(create('xai', model, ask({ aspect_ratio: '2:3' })).body, { model, prompt: 'a lighthouse at dusk', aspect_ratio: '2:3' });
    assert.deepEqual(create('xai', model, ask({ size: '640x480' })).body, { model, prompt: 'a lighthouse at dusk', resolution: '480p', aspect_ratio: '4:3' });
    refused('xai', model, ask({ seconds: 20 }), 'seconds');
    refused('xai', model, ask({ size: '1920x1080' }), 'size');
    refused('xai', model, ask({ size: '848x480' }), 'size');
    refused('xai', model, ask({ aspect_ratio: '21:9' }), 'aspect_ratio');
    refused('xai', model, ask({ seed: 1 }), 'seed');
    refused('xai', model, ask({ negative_prompt: 'rain' }), 'negative_prompt');

    assert.deepEqual(video('xai').created({ request_id: 'd97415a1-5796' }, target('xai', model), ask()), { taskId: 'd97415a1-5796', state: { status: 'queued' } });
    assert.throws(() => video('xai').created({}, target('xai', model), ask()), /request_id/);
    assert.equal(pollOf('xai', model, 'd97415a1-5796'), '/videos/d97415a1-5796');
    // A pending request may answer 202 without a body.
    assert.deepEqual(state('xai', undefined), { status: 'queued' });
    assert.deepEqual(state('xai', { status: 'pending', progress: 40 }), { status: 'in_progress', progress: 40 });
    assert.deepEqual(state('xai', { status: 'done', video: { url: 'https://vidgen.x.ai/a.mp4', duration: 8, respect_moderation: true }, model }),
      { status: 'completed', result: { url: 'https://vidgen.x.ai/a.mp4', contentType: 'video/mp4' }, seconds: 8 });
    assert.equal(state('xai', { status: 'done', video: { url: 'https://vidgen.x.ai/a.mp4', respect_moderation: false } }).status, 'failed');
    assert.deepEqual(state('xai', { status: 'failed', error: { code: 'internal', message: 'generation failed' } }), { status: 'failed', error: 'generation failed' });
    assert.equal(state('xai', { status: 'expired' }).status, 'failed');
  });

  test('zhipu: CogVideoX at /videos/generations with its sizes and lengths, read at /async-result/{id}', () => {
    const { path, body } = create('zhipu', 'cogvideox-3', ask({ seconds: 10, size: '1920x1080', image: 'https://img.example/cat.png' }));
    assert.equal(path, '/videos/generations');
    assert.deepEqual(body, { model: 'cogvideox-3', prompt: 'a lighthouse at dusk', duration: 10, size: '1920x1080', image_url: 'https://img.example/cat.png' });
    assert.equal(create('zhipu', 'cogvideox-3', ask({ aspect_ratio: '9:16' })).body.size, '1080x1920');
    assert.equal(create('zhipu', 'cogvideox-flash', ask({ size: '720x480' })).body.size, '720x480');
    assert.deepEqual(create('zhipu', 'viduq1-text', ask({ aspect_ratio: '16:9', seconds: 5 })).body, { model: 'viduq1-text', prompt: 'a lighthouse at dusk', duration: 5, aspect_ratio: '16:9' });
    refused('zhipu', 'cogvideox-3', ask({ size: '720x480' }), 'size');
    refused('zhipu', 'cogvideox-3', ask({ seconds: 6 }), 'seconds');
    refused('zhipu', 'cogvideox-3', ask({ aspect_ratio: '4:3' }), 'aspect_ratio');
    refused('zhipu', 'cogvideox-3', ask({ seed: 3 }), 'seed');
    refused('zhipu', 'cogvideox-3', ask({ negative_prompt: 'rain' }), 'negative_prompt');
    refused('zhipu', 'viduq1-text', ask({ image: 'https://img.example/cat.png' }), 'image');

    const created = video('zhipu').created({ model: 'cogvideox-3', id: '8875817957674828620', request_id: 'r-1', task_status: 'PROCESSING' }, target('zhipu', 'cogvideox-3'), ask());
    assert.deepEqual(created, { taskId: '8875817957674828620', state: { status: 'queued' } });
    assert.equal(pollOf('zhipu', 'cogvideox-3', '8875817957674828620'), '/async-result/8875817957674828620');
    assert.deepEqual(state('zhipu', { task_status: 'PROCESSING' }), { status: 'in_progress' });
    assert.deepEqual(state('zhipu', {
      model: 'cogvideox', request_id: 'r-1', task_status: 'SUCCESS',
      video_result: [{ cover_image_url: 'https://sfile.chatglm.cn/c.png', url: 'https://sfile.chatglm.cn/v.mp4' }],
    }), { status: 'completed', result: { url: 'https://sfile.chatglm.cn/v.mp4', contentType: 'video/mp4' } });
    assert.deepEqual(state('zhipu', { task_status: 'FAIL' }), { status: 'failed', error: 'no reason given' });
    assert.throws(() => state('zhipu', { task_status: 'SUCCESS', video_result: [] }), /video_result/);
  });

  test('volcengine: a Seedance task whose parameters are the prompt\'s commands, the first frame as an image_url part', () => {
    const model = 'doubao-seedance-1-0-pro-250528';
    const { path, body } = create('volcengine', model, ask({ seconds: 5, size: '1248x704', seed: 11, image: 'https://img.example/cat.png' }));
    assert.equal(path, '/contents/generations/tasks');
    assert.deepEqual(body, {
      model,
      content: [
        { type: 'text', text: 'a lighthouse at dusk --ratio 16:9 --resolution 720p --duration 5 --seed 11' },
        { type: 'image_url', image_url: { url: 'https://img.example/cat.png' } },
      ],
    });
    assert.deepEqual(create('volcengine', model, ask({ aspect_ratio: '21:9' })).body.content, [{ type: 'text', text: 'a lighthouse at dusk --ratio 21:9' }]);
    // A size names one of Seedance's frames; one it does not make (1280x720: its 16:9 at 720p is 1248x704) is refused.
    for (const [size, commands] of [['864x480', '--ratio 16:9 --resolution 480p'], ['640x640', '--ratio 1:1 --resolution 480p'], ['1504x640', '--ratio 21:9 --resolution 720p'], ['1920x1088', '--ratio 16:9 --resolution 1080p']]) {
      assert.deepEqual(create('volcengine', model, ask({ size })).body.content, [{ type: 'text', text: `a lighthouse at dusk ${commands}` }], size);
    }
    refused('volcengine', model, ask({ size: '1280x720' }), 'size');
    refused('volcengine', 'doubao-seedance-1-0-lite-t2v-250428', ask({ image: 'https://img.example/cat.png' }), 'image');
    refused('volcengine', model, ask({ negative_prompt: 'rain' }), 'negative_prompt');
    refused('volcengine', model, ask({ seconds: 30 }), 'seconds');
    refused('volcengine', model, ask({ size: '1000x1000' }), 'size');
    refused('volcengine', model, ask({ aspect_ratio: '2:1' }), 'aspect_ratio');

    assert.deepEqual(video('volcengine').created({ id: 'cgt-20250331175019-68d9t' }, target('volcengine', model), ask()), { taskId: 'cgt-20250331175019-68d9t', state: { status: 'queued' } });
    assert.equal(pollOf('volcengine', model, 'cgt-20250331175019-68d9t'), '/contents/generations/tasks/cgt-20250331175019-68d9t');
    assert.deepEqual(state('volcengine', { id: 'x', status: 'queued' }), { status: 'queued' });
    assert.deepEqual(state('volcengine', { id: 'x', status: 'running' }), { status: 'in_progress' });
    assert.deepEqual(state('volcengine', {
      id: 'x', model, status: 'succeeded', content: { video_url: 'https://ark-content.example/v.mp4' },
      usage: { completion_tokens: 108900, total_tokens: 108900 }, resolution: '720p', duration: 5, ratio: '16:9', framespersecond: 24,
    }), { status: 'completed', result: { url: 'https://ark-content.example/v.mp4', contentType: 'video/mp4' }, seconds: 5 });
    assert.deepEqual(state('volcengine', { status: 'failed', error: { code: 'OutputVideoSensitiveContentDetected', message: 'The output video may contain sensitive information.' } }),
      { status: 'failed', error: 'The output video may contain sensitive information.' });
    assert.equal(state('volcengine', { status: 'cancelled' }).status, 'failed');
    assert.equal(state('volcengine', { status: 'expired' }).status, 'failed');
    assert.throws(() => state('volcengine', { status: 'paused' }), /known status/);
  });

  test('xai: a poll answered 202 with no body goes through the exchange as a pending task; a 200 with none is still refused', async () => {
    let status = 202;
    const server = createServer((_req, res) => {
      res.writeHead(status);
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const deps = testCallDeps();
    try {
      const { port } = server.address() as AddressInfo;
      const provider = compatibleProviderBySlug('xai');
      const at = { ...target('xai', 'grok-imagine-video'), baseUrl: `http://127.0.0.1:${port}/v1` };
      const signal = new AbortController().signal;
      const answer = await exchangeJson(deps, provider, at, provider.video!.poll('req-1', at), signal);
      assert.equal(answer, null);
      assert.deepEqual(provider.video!.state(answer, at, 'req-1'), { status: 'queued' });
      status = 200;
      await assert.rejects(exchangeJson(deps, provider, at, provider.video!.poll('req-1', at), signal), /not JSON/);
    } finally {
      await deps.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
