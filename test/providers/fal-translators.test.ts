/**
 * fal's image and video translators driven directly against the loopback fal (test/fakes/fal.ts), each request
 * they build sent as the gateway would send it: the FLUX input and its follow-up walk with the progress each
 * polled answer gives, the video task created, its id rebuilt into the status URL and polled through
 * queued -> in_progress -> completed (the response URL read once COMPLETED), the result on the CDN, and fal's
 * errors and foreign URLs refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ImageRequest } from '../../core/canonical/image.ts';
import type { ProviderTarget, UpstreamRequest } from '../../core/dispatch/provider.ts';
import fal from '../../providers/fal-ai/index.ts';
import { FAL_KEY, startFakeFal, type FakeFal } from '../fakes/fal.ts';

describe('fal-ai image and video translators against the loopback fal', () => {
  let fake: FakeFal;
  let target: (model: string, options?: Record<string, unknown>) => ProviderTarget;

  /** Sends a built request as the exchange does: a path under the base URL, or an absolute URL. */
  const send = async (request: UpstreamRequest): Promise<{ status: number; body: unknown }> => {
    const url = /^https?:\/\//.test(request.path) ? request.path : `${fake.origin}${request.path}`;
    const response = await fetch(url, { method: request.method, headers: request.headers, ...(request.body !== undefined ? { body: request.body } : {}) });
    return { status: response.status, body: await response.json() };
  };

  before(async () => {
    fake = await startFakeFal();
    target = (model, options = {}) => ({ slug: 'fal-ai', baseUrl: fake.origin, apiKey: FAL_KEY, headers: {}, options: { pollIntervalMs: 1, ...options }, upstreamModel: model });
  });
  after(async () => {
    await fake?.close();
  });

  test('image: FLUX input, the follow-up walk to the output, progress from each answer, the images on the CDN', async () => {
    const t = target('fal-ai/flux/dev');
    const request: ImageRequest = { model: 'flux', prompt: 'a red fox', n: 3, size: '1024x768', quality: 'hd', response_format: 'url' };
    const first = fal.image!.toUpstream(request, t);
    assert.deepEqual([first.method, first.path, first.headers.authorization], ['POST', '/fal-ai/flux/dev', `Key ${FAL_KEY}`]);
    assert.deepEqual(JSON.parse(first.body!), { prompt: 'a red fox', num_images: 3, output_format: 'png', image_size: { width: 1024, height: 768 } });
    let answer = await send(first);
    const progress: Array<number | undefined> = [];
    const paths: string[] = [];
    for (let step = 0; ; step++) {
      const next = fal.image!.followUp!(answer.body, t, step, request);
      progress.push(fal.image!.progress!(answer.body));
      if (!next) break;
      paths.push(new URL(next.request.path).pathname + new URL(next.request.path).search);
      assert.equal(next.request.headers.authorization, `Key ${FAL_KEY}`);
      answer = await send(next.request);
    }
    const id = fake.requests.find((r) => r.path.startsWith('/fal-ai/flux/requests/'))!.path.split('/')[4];
    assert.deepEqual(paths, [
      `/fal-ai/flux/requests/${id}/status?logs=1`, `/fal-ai/flux/requests/${id}/status?logs=1`, `/fal-ai/flux/requests/${id}/status?logs=1`, `/fal-ai/flux/requests/${id}`,
    ]);
    assert.deepEqual(progress, [0, 0, 40, 100, undefined], 'submitted, queued, the logged 40%, completed, then the output');
    const images = fal.image!.fromUpstream(answer.body, t, request).images;
    assert.deepEqual(images, [0, 1, 2].map((i) => ({ url: `${fake.cdnOrigin}/files/image-${i}.png`, mimeType: 'image/png' })));
    assert.equal(fal.capabilities.image!.maxImages, 4);
    assert.deepEqual([fal.image!.maxImages!(t), fal.image!.maxImages!(target('fal-ai/recraft-v3', { maxImages: 1 }))], [undefined, 1]);
    assert.equal(fal.image!.progress!({ status: 'IN_PROGRESS', request_id: 'r', response_url: `${fake.origin}/a/b/requests/r`, logs: [{ message: 'warming up' }] }), 50, 'no percentage logged: half way');
  });

  /** One poll as the runner makes it: the status, then the follow-ups the translator asks for; the final answer. */
  const pollOnce = async (taskId: string, t: ProviderTarget, paths: string[]) => {
    let request: UpstreamRequest | undefined = fal.video!.poll(taskId, t);
    let answer = { status: 0, body: undefined as unknown };
    while (request) {
      assert.equal(request.headers.authorization, `Key ${FAL_KEY}`);
      paths.push(/^https?:/.test(request.path) ? new URL(request.path).pathname : request.path);
      answer = await send(request);
      if (answer.status >= 400) return answer;
      request = fal.video!.followUp!(answer.body, t, taskId)?.request;
    }
    return answer;
  };

  test('video: created from the submit answer; each poll reads the status, a COMPLETED one followed by the response URL', async () => {
    const t = target('fal-ai/kling-video/v2.1/master/text-to-video');
    const create = fal.video!.create({ model: 'kling', prompt: 'a fox running', seconds: 5, size: '1280x720', image: 'https://example.com/first.png', negative_prompt: 'blur', seed: 3 }, t);
    assert.deepEqual([create.method, create.path], ['POST', '/fal-ai/kling-video/v2.1/master/text-to-video']);
    assert.deepEqual(JSON.parse(create.body!), { prompt: 'a fox running', duration: '5', aspect_ratio: '16:9', image_url: 'https://example.com/first.png', negative_prompt: 'blur', seed: 3 });
    const created = fal.video!.created((await send(create)).body, t, { model: 'kling', prompt: 'a fox running' });
    assert.match(created.taskId, /^fal-ai\/kling-video\/requests\/[0-9a-f-]{36}$/, 'the app\'s request path: enough to rebuild the URLs');
    assert.deepEqual(created.state, { status: 'queued', progress: 0 });
    const early = await send({ method: 'GET', path: `/${created.taskId}`, headers: { authorization: `Key ${FAL_KEY}` } });
    assert.deepEqual([early.status, (early.body as { detail: string }).detail], [400, 'Request is still in progress'], 'fal refuses an early read of the response URL');
    const states = [];
    const paths: string[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await pollOnce(created.taskId, t, paths);
      const state = fal.video!.state(answer.body, t, created.taskId);
      states.push(state);
      if (state.status === 'completed') break;
    }
    assert.deepEqual(paths, [...Array(3).fill(`/${created.taskId}/status?logs=1`), `/${created.taskId}`]);
    assert.deepEqual(states, [
      { status: 'queued', progress: 0 },
      { status: 'in_progress', progress: 40 },
      { status: 'completed', progress: 100, result: { url: `${fake.cdnOrigin}/files/video.mp4`, contentType: 'video/mp4' } },
    ]);
    const file = await fetch(states.at(-1)!.result!.url);
    assert.deepEqual(Buffer.from(await file.arrayBuffer()), fake.files['video.mp4']!.bytes, 'a public CDN file: no credential needed');
    assert.equal(fake.requests.at(-1)!.headers.authorization, undefined);
  });

  test('video: Veo\'s suffixed duration and a given aspect ratio; a failed request: its status error, or its response\'s error mapped', async () => {
    const t = target('fal-ai/veo3', { durationSuffix: 's' });
    const create = fal.video!.create({ model: 'veo', prompt: 'waves', seconds: 8, aspect_ratio: '9:16', size: '1280x720' }, t);
    assert.deepEqual(JSON.parse(create.body!), { prompt: 'waves', duration: '8s', aspect_ratio: '9:16' });
    const { taskId: first, state: queued } = fal.video!.created((await send(create)).body, t, { model: 'veo', prompt: 'waves' });
    fake.statusError = 'Runner crashed';
    let state = queued;
    for (let i = 0; i < 5 && state.status !== 'failed'; i++) state = fal.video!.state((await pollOnce(first, t, [])).body, t, first);
    assert.deepEqual(state, { status: 'failed', error: 'Runner crashed' }, 'COMPLETED with an error: failed, the response URL not read');

    const second = fal.video!.created((await send(create)).body, t, { model: 'veo', prompt: 'waves' }).taskId;
    fake.resultError = { status: 422, body: { detail: [{ loc: ['body', 'prompt'], msg: 'Prompt was flagged', type: 'content_policy_violation' }] } };
    let answer = { status: 200, body: {} as unknown };
    for (let i = 0; i < 5 && answer.status === 200; i++) answer = await pollOnce(second, t, []);
    assert.equal(answer.status, 422);
    const error = fal.mapError(answer.status, answer.body, t);
    assert.equal(error.code, 'UPSTREAM_BAD_REQUEST');
    assert.match(error.message, /Prompt was flagged \(body\.prompt\)/);
    assert.throws(() => fal.video!.poll('../admin', t), /not a fal request path/);
  });

  test('transcription: translation (not declared, see index.ts) would send task translate and no language', () => {
    const audio = { bytes: Buffer.from('RIFF'), filename: 'a.wav', mimeType: 'audio/wav' };
    const plan = fal.transcription!.toUpstream({ model: 'w', audio, language: 'fr', response_format: 'json' }, target('fal-ai/whisper'), 'translation');
    assert.equal(plan.kind, 'json');
    assert.deepEqual(JSON.parse(plan.request.body!), { audio_url: 'data:audio/wav;base64,UklGRg==', task: 'translate', chunk_level: 'segment', version: '3' });
    const answer = fal.transcription!.fromUpstream({ text: 'Hi', chunks: [{ timestamp: [0, null], text: 'Hi' }], inferred_languages: ['fr'] }, target('fal-ai/whisper'), { model: 'w', audio, response_format: 'json' }, 'translation');
    assert.deepEqual(answer, { object: 'transcription', text: 'Hi', language: 'fr', segments: [{ id: 0, start: 0, end: 0, text: 'Hi' }], usage: {} }, 'an open last chunk ends where it starts');
  });

  test('errors: a refused key is the gateway\'s problem; a URL off fal\'s hosts never gets the credential', async () => {
    const refused = await send({ ...fal.image!.toUpstream({ model: 'x', prompt: 'p', n: 1, response_format: 'url' }, target('fal-ai/flux/dev')), headers: { authorization: 'Key wrong' } });
    const error = fal.mapError(refused.status, refused.body, target('fal-ai/flux/dev'));
    assert.deepEqual([error.code, error.message], ['UPSTREAM_ERROR', 'fal-ai refused the gateway\'s credential: Invalid API key']);
    const foreign = { status: 'IN_QUEUE', request_id: 'r', response_url: 'https://evil.example/fal-ai/flux/requests/r', status_url: 'https://evil.example/s' };
    assert.throws(() => fal.image!.followUp!(foreign, target('fal-ai/flux/dev'), 0, { model: 'x', prompt: 'p', n: 1, response_format: 'url' }), /not fal's; the gateway's credential is not sent there/);
    const onFal = fal.image!.followUp!({ ...foreign, status_url: 'https://queue.fal.run/fal-ai/flux/requests/r/status' }, target('fal-ai/flux/dev'), 0, { model: 'x', prompt: 'p', n: 1, response_format: 'url' });
    assert.equal(onFal!.request.path, 'https://queue.fal.run/fal-ai/flux/requests/r/status?logs=1');
    assert.throws(() => fal.image!.toUpstream({ model: 'x', prompt: 'p', n: 1, response_format: 'url' }, target('flux')), /not a fal model id/);
    assert.deepEqual(fal.passthroughHeaders!(target('fal-ai/flux/dev')), { authorization: `Key ${FAL_KEY}` }, 'a native request through /proxy gets the Key scheme too');
  });
});
