/**
 * Replicate's media translators against recorded prediction bodies: image input (num_outputs, the size as an
 * aspect ratio, PNG), the progress read from the logs' progress bars, the image output; video jobs (create,
 * created, poll, state through starting -> processing -> succeeded or failed, each model's fields and refusals);
 * Whisper's translation answer; speech follow-ups (the file fetched without the credential); the file URLs an
 * answer must hold.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { TranscriptionRequest } from '../../core/canonical/audio.ts';
import type { ImageRequest } from '../../core/canonical/image.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import replicate from '../../providers/replicate/index.ts';
import { nearestRatio } from '../../providers/replicate/models.ts';

const target = (upstreamModel: string, options: Record<string, unknown> = {}): ProviderTarget => ({
  slug: 'replicate', baseUrl: 'https://api.replicate.com/v1', apiKey: 'r8_key', headers: {}, options, upstreamModel,
});

const image = (fields: Partial<ImageRequest> = {}): ImageRequest => ({ model: 'flux', prompt: 'a red fox', n: 1, response_format: 'url', ...fields });

const urls = { get: 'https://api.replicate.com/v1/predictions/p1', cancel: 'https://api.replicate.com/v1/predictions/p1/cancel' };

/** Bodies as flux-schnell's predictions answer them while polled (logs abridged). */
const RECORDED = {
  starting: { id: 'p1', status: 'starting', logs: '', output: null, error: null, urls },
  noBar: { id: 'p1', status: 'processing', logs: 'Using seed: 1234\nRunning prediction\n', output: null, error: null, urls },
  half: {
    id: 'p1', status: 'processing', error: null, output: null, urls,
    logs: 'Using seed: 1234\nRunning prediction\n  0%|          | 0/4 [00:00<?, ?it/s]\n 25%|██▌       | 1/4 [00:00<00:00,  4.01it/s]\n 50%|█████     | 2/4 [00:00<00:00,  4.02it/s]\n',
  },
  done: {
    id: 'p1', status: 'succeeded', error: null, urls, metrics: { predict_time: 1.1 },
    logs: 'Using seed: 1234\n100%|██████████| 4/4 [00:00<00:00,  4.05it/s]\n',
    output: ['https://replicate.delivery/xezq/abc/out-0.png', 'https://replicate.delivery/xezq/def/out-1.png'],
  },
};

const refusedWith = (capability: string) => (err: unknown) => err instanceof GatewayError && err.code === 'CAPABILITY_NOT_SUPPORTED' && (err.details as { capability?: string }).capability === capability;

describe('replicate images', () => {
  const translator = replicate.image!;

  test('flux-schnell: num_outputs, the size as the nearest aspect ratio, PNG; created without waiting, so it is polled', () => {
    const request = translator.toUpstream(image({ n: 3, size: '1792x1024' }), target('black-forest-labs/flux-schnell'));
    assert.equal(request.path, '/models/black-forest-labs/flux-schnell/predictions');
    assert.equal(request.headers.authorization, 'Bearer r8_key');
    assert.equal(request.headers.prefer, undefined);
    assert.deepEqual(JSON.parse(request.body!), { input: { prompt: 'a red fox', output_format: 'png', num_outputs: 3, aspect_ratio: '16:9' } });
    assert.equal(replicate.capabilities.image?.maxImages, 4);
  });

  test('sizes: OpenAI\'s map to a ratio the model takes; one near none is refused, as are quality and style; flux-1.1-pro makes one image a call and has no num_outputs', () => {
    assert.deepEqual(['1024x1024', '1536x1024', '1024x1536', '1024x1792', '768x1344'].map((s) => nearestRatio(s, ['1:1', '16:9', '3:2', '2:3', '9:16'])), ['1:1', '3:2', '2:3', '9:16', '9:16']);
    assert.throws(() => translator.toUpstream(image({ size: '4000x1000' }), target('black-forest-labs/flux-schnell')), refusedWith('size'));
    assert.throws(() => translator.toUpstream(image({ quality: 'hd' }), target('black-forest-labs/flux-schnell')), refusedWith('quality'));
    assert.throws(() => translator.toUpstream(image({ style: 'vivid' }), target('black-forest-labs/flux-schnell')), refusedWith('style'));
    const pro = JSON.parse(translator.toUpstream(image({ size: '1024x1024' }), target('black-forest-labs/flux-1.1-pro')).body!);
    assert.deepEqual(pro.input, { prompt: 'a red fox', output_format: 'png', aspect_ratio: '1:1' });
    assert.deepEqual(['black-forest-labs/flux-1.1-pro', 'black-forest-labs/flux-schnell', 'someone/unknown'].map((m) => translator.maxImages!(target(m))), [1, 4, 4], 'the core splits n by it');
    assert.throws(() => translator.toUpstream(image({ n: 2 }), target('black-forest-labs/flux-1.1-pro')), refusedWith('n'));
  });

  test('a versioned model goes to /predictions with its version; modelInput is under the mapped fields', () => {
    const version = 'f'.repeat(64);
    const request = translator.toUpstream(image(), target(`someone/my-flux:${version}`, { modelInput: { 'someone/my-flux': { go_fast: false, prompt: 'not this' } } }));
    assert.equal(request.path, '/predictions');
    assert.deepEqual(JSON.parse(request.body!), { version, input: { go_fast: false, prompt: 'a red fox', output_format: 'png', num_outputs: 1 } });
  });

  test('progress(): the last percentage the logs\' progress bars printed, undefined without one', () => {
    assert.equal(translator.progress!(RECORDED.starting), undefined);
    assert.equal(translator.progress!(RECORDED.noBar), undefined);
    assert.equal(translator.progress!(RECORDED.half), 50);
    assert.equal(translator.progress!(RECORDED.done), 100);
    assert.equal(translator.progress!({ status: 'processing', logs: ' 75%|#######5  | 3/4\n' }), 75);
    assert.equal(translator.progress!(null), undefined);
  });

  test('followUp polls urls.get while unfinished; the succeeded output\'s URLs are the images; failures throw', () => {
    const next = translator.followUp!(RECORDED.half, target('black-forest-labs/flux-schnell', { pollIntervalMs: 10 }), 0, image());
    assert.deepEqual(next?.request, { method: 'GET', path: urls.get, headers: { accept: 'application/json', authorization: 'Bearer r8_key' } });
    assert.equal(next?.delayMs, 10);
    assert.equal(translator.followUp!(RECORDED.done, target('x/y'), 3, image()), null);
    assert.deepEqual(translator.fromUpstream(RECORDED.done, target('x/y'), image({ n: 2 })), { images: RECORDED.done.output.map((url) => ({ url })) });
    assert.deepEqual(translator.fromUpstream({ ...RECORDED.done, output: 'https://replicate.delivery/one.png' }, target('x/y'), image()), { images: [{ url: 'https://replicate.delivery/one.png' }] });
    assert.throws(() => translator.fromUpstream({ ...RECORDED.done, output: ['not a url'] }, target('x/y'), image()), /malformed prediction output/);
    assert.throws(() => translator.followUp!({ ...RECORDED.half, status: 'failed', error: 'NSFW content detected' }, target('x/y'), 1, image()), /failed: NSFW content detected/);
  });
});

describe('replicate video', () => {
  const translator = replicate.video!;
  const veo = target('google/veo-3');

  test('veo-3: prompt, duration, aspect ratio (given or from the size), resolution from the size, image, negative prompt, seed', () => {
    const request = translator.create({ model: 'veo', prompt: 'a fox runs', seconds: 8, size: '1280x720', image: 'https://example.com/first.png', negative_prompt: 'rain', seed: 7 }, veo);
    assert.equal(request.path, '/models/google/veo-3/predictions');
    assert.equal(request.headers.prefer, undefined, 'the job runner polls; nothing waits');
    assert.deepEqual(JSON.parse(request.body!).input, { prompt: 'a fox runs', duration: 8, aspect_ratio: '16:9', resolution: '720p', image: 'https://example.com/first.png', negative_prompt: 'rain', seed: 7 });
    assert.deepEqual(JSON.parse(translator.create({ model: 'veo', prompt: 'p', aspect_ratio: '9:16' }, veo).body!).input, { prompt: 'p', aspect_ratio: '9:16' });
    assert.throws(() => translator.create({ model: 'veo', prompt: 'p', aspect_ratio: '1:1' }, veo), refusedWith('aspect_ratio'));
    assert.throws(() => translator.create({ model: 'veo', prompt: 'p', size: '640x360' }, veo), refusedWith('size'));
  });

  test('minimax/video-01: first_frame_image, six seconds; other lengths, ratios and negative prompts are refused', () => {
    const minimax = target('minimax/video-01');
    assert.deepEqual(JSON.parse(translator.create({ model: 'm', prompt: 'p', seconds: 6, image: 'data:image/png;base64,AAAA' }, minimax).body!).input, { prompt: 'p', first_frame_image: 'data:image/png;base64,AAAA' });
    assert.throws(() => translator.create({ model: 'm', prompt: 'p', seconds: 10 }, minimax), refusedWith('seconds'));
    assert.throws(() => translator.create({ model: 'm', prompt: 'p', aspect_ratio: '16:9' }, minimax), refusedWith('aspect_ratio'));
    assert.throws(() => translator.create({ model: 'm', prompt: 'p', negative_prompt: 'x' }, minimax), refusedWith('negative_prompt'));
    const done = translator.state({ id: 'v1', status: 'succeeded', output: 'https://replicate.delivery/v.mp4', logs: '' }, minimax, 'v1');
    assert.deepEqual(done, { status: 'completed', progress: 100, result: { url: 'https://replicate.delivery/v.mp4' }, seconds: 6 });
  });

  test('kling: start_image, the size as a ratio and no resolution; a seed is refused', () => {
    const kling = target('kwaivgi/kling-v2.0');
    assert.deepEqual(JSON.parse(translator.create({ model: 'k', prompt: 'p', seconds: 10, size: '1024x1024', image: 'https://example.com/a.png', negative_prompt: 'blur' }, kling).body!).input,
      { prompt: 'p', duration: 10, aspect_ratio: '1:1', start_image: 'https://example.com/a.png', negative_prompt: 'blur' });
    assert.throws(() => translator.create({ model: 'k', prompt: 'p', seed: 1 }, kling), refusedWith('seed'));
  });

  test('created, poll, state: starting -> queued, processing -> in_progress with the logs\' progress, succeeded -> the URL, failed and canceled -> failed', () => {
    const created = translator.created({ id: 'v9', status: 'starting', logs: '', output: null, urls }, veo, { model: 'veo', prompt: 'p' });
    assert.deepEqual(created, { taskId: 'v9', state: { status: 'queued' } });
    assert.deepEqual(translator.poll('v9', veo), { method: 'GET', path: '/predictions/v9', headers: { accept: 'application/json', authorization: 'Bearer r8_key' } });
    assert.deepEqual(translator.state({ id: 'v9', status: 'processing', logs: 'Generating...\n' }, veo, 'v9'), { status: 'in_progress' });
    assert.deepEqual(translator.state({ id: 'v9', status: 'processing', logs: ' 40%|####      | 20/50\n' }, veo, 'v9'), { status: 'in_progress', progress: 40 });
    assert.deepEqual(translator.state({ id: 'v9', status: 'succeeded', output: 'https://replicate.delivery/v9.mp4' }, veo, 'v9'), { status: 'completed', progress: 100, result: { url: 'https://replicate.delivery/v9.mp4' } });
    assert.deepEqual(translator.state({ id: 'v9', status: 'failed', error: 'The prompt was flagged' }, veo, 'v9'), { status: 'failed', error: 'The prompt was flagged' });
    assert.deepEqual(translator.state({ id: 'v9', status: 'canceled', error: null }, veo, 'v9'), { status: 'failed', error: 'the prediction was canceled' });
    assert.throws(() => translator.created({ status: 'starting' }, veo, { model: 'veo', prompt: 'p' }), /no id/);
    assert.throws(() => translator.state({ status: 'done' }, veo, 'v9'), /malformed prediction/);
  });
});

describe('replicate whisper translation', () => {
  const translator = replicate.transcription!;
  const request: TranscriptionRequest = { model: 'whisper', audio: { bytes: Buffer.from('RIFF'), filename: 'a.wav', mimeType: 'audio/wav' }, language: 'fr', response_format: 'json' };

  test('translate: true, no language; the answer is the English translation, metered by the segments\' end, without the spoken language\'s segments', () => {
    const plan = translator.toUpstream(request, target('openai/whisper'), 'translation');
    assert.equal(plan.kind, 'json');
    assert.deepEqual(JSON.parse(plan.request.body!).input, { audio: 'data:audio/wav;base64,UklGRg==', transcription: 'plain text', translate: true });
    const output = {
      transcription: ' Bonjour. Ça va ?', detected_language: 'french', translation: ' Hello. How are you?',
      segments: [{ id: 0, start: 0, end: 1.2, text: ' Bonjour.' }, { id: 1, start: 1.3, end: 2.5, text: ' Ça va ?' }],
    };
    const result = translator.fromUpstream({ id: 'w', status: 'succeeded', output }, target('openai/whisper'), request, 'translation');
    assert.deepEqual(result, { object: 'transcription', text: 'Hello. How are you?', language: 'english', usage: { audio_seconds: 2.5 } });
    const transcribed = translator.fromUpstream({ id: 'w', status: 'succeeded', output }, target('openai/whisper'), request, 'transcription');
    assert.equal(transcribed.text, 'Bonjour. Ça va ?');
    assert.equal(transcribed.language, 'french');
    assert.equal(transcribed.segments?.length, 2);
    assert.throws(() => translator.fromUpstream({ id: 'w', status: 'succeeded', output: { ...output, translation: null } }, target('openai/whisper'), request, 'translation'), /without translation/);
  });
});

describe('replicate speech follow-ups', () => {
  const translator = replicate.speech!;
  const request = { model: 'tts', input: 'Hi', voice: 'Wise_Woman', response_format: 'flac' as const };
  const minimax = target('minimax/speech-02-turbo', { pollIntervalMs: 5 });

  test('a prediction that finished within Prefer: wait: its file is fetched at once, streamed, without the credential or the operator\'s headers', () => {
    const withHeaders = { ...minimax, headers: { 'x-team': 'audio' } };
    const create = translator.toUpstream(request, withHeaders);
    assert.equal(create.headers['x-team'], 'audio');
    assert.deepEqual(JSON.parse(create.body!), { input: { text: 'Hi', voice_id: 'Wise_Woman', audio_format: 'flac' } });
    const next = translator.followUp!({ id: 's1', status: 'succeeded', output: 'https://replicate.delivery/xezq/s1.flac', urls }, withHeaders, 0, request);
    assert.deepEqual(next, { request: { method: 'GET', path: 'https://replicate.delivery/xezq/s1.flac', headers: { accept: 'audio/*' } }, stream: true });
    assert.equal(translator.contentType!(request, minimax), 'audio/flac');
  });

  test('unfinished: polled with the credential; an output that is not one file URL is malformed', () => {
    const next = translator.followUp!({ id: 's1', status: 'processing', output: null, urls }, minimax, 2, request);
    assert.deepEqual(next, { request: { method: 'GET', path: urls.get, headers: { accept: 'application/json', authorization: 'Bearer r8_key' } }, delayMs: 11 });
    assert.throws(() => translator.followUp!({ id: 's1', status: 'succeeded', output: ['https://a/1.mp3', 'https://a/2.mp3'], urls }, minimax, 0, request), /several files/);
    assert.throws(() => translator.followUp!({ id: 's1', status: 'succeeded', output: 'file:///etc/passwd', urls }, minimax, 0, request), /not file URLs/);
    assert.throws(() => translator.followUp!({ id: 's1', status: 'processing', output: null, urls: { get: 'https://elsewhere.example/p/s1' } }, minimax, 0, request), /not Replicate's/);
  });
});
