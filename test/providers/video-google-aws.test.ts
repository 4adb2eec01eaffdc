/**
 * The video translators of gemini (Veo on the Gemini API), vertex-ai (Veo on Vertex AI) and bedrock (Nova Reel):
 * the bodies they build and refuse, their reading of recorded provider answers, and each one walking a loopback
 * fake of its provider over HTTP as the job runner does (create, polls until the task ends, then the download),
 * every request passed through the provider's own authorize (the API key, the OAuth token, SigV4).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { VideoRequest, VideoTaskState } from '../../core/canonical/video.ts';
import type { ProviderDefinition, ProviderIO, ProviderTarget, UpstreamRequest, VideoTranslator } from '../../core/dispatch/provider.ts';
import bedrock from '../../providers/bedrock/index.ts';
import gemini from '../../providers/gemini/index.ts';
import vertex from '../../providers/vertex-ai/index.ts';
import { startFakeVertex, VERTEX_BASE_PATH, type FakeVertex } from '../fakes/vertex.ts';
import { ACCESS_KEY, REGION, SECRET, startFakeAws, type FakeAws } from './bedrock-files-fake.ts';

const PNG = `data:image/png;base64,${Buffer.from('\x89PNG-first-frame', 'latin1').toString('base64')}`;
const MP4 = Buffer.from('\x00\x00\x00\x18ftypmp42-fake-video', 'latin1');
const io: ProviderIO = { fetchJson: () => Promise.reject(new Error('no exchange here')), cached: () => Promise.reject(new Error('no exchange here')), now: () => Date.now() };

const target = (slug: string, baseUrl: string, upstreamModel: string, options: Record<string, unknown> = {}, apiKey?: string): ProviderTarget =>
  ({ slug, baseUrl, headers: {}, options, upstreamModel, ...(apiKey ? { apiKey } : {}) });
const video = (provider: ProviderDefinition) => provider.video!;
const body = (request: UpstreamRequest) => JSON.parse(request.body!) as Record<string, any>;
const refused = (pattern: RegExp) => (err: unknown) => (err as { code?: string }).code === 'CAPABILITY_NOT_SUPPORTED' && pattern.test((err as Error).message);

/** What the job runner does: create, then poll until the task ends, then fetch a video that needs the credential. */
async function walk(provider: ProviderDefinition, t: ProviderTarget, request: VideoRequest): Promise<{ states: VideoTaskState[]; video: Buffer | null }> {
  const send = async (r: UpstreamRequest) => {
    const signed = provider.authorize ? await provider.authorize(r, t, io, new AbortController().signal) : r;
    const url = /^https?:\/\//.test(signed.path) ? signed.path : `${t.baseUrl.replace(/\/+$/, '')}${signed.path}`;
    const response = await fetch(url, { method: signed.method, headers: signed.headers, ...(signed.body !== undefined ? { body: signed.body } : {}) });
    const bytes = Buffer.from(await response.arrayBuffer());
    assert.ok(response.ok, `${signed.method} ${url}: ${response.status} ${bytes.toString()}`);
    return bytes;
  };
  const translator = video(provider);
  const { taskId, state } = translator.created(JSON.parse((await send(translator.create(request, t))).toString()), t, request);
  const states = [state];
  while (!['completed', 'failed'].includes(states.at(-1)!.status)) {
    assert.ok(states.length < 10, 'the task ends');
    states.push(translator.state(JSON.parse((await send(translator.poll(taskId, t))).toString()), t, taskId));
  }
  const result = states.at(-1)!.result;
  return { states, video: result?.needsCredential ? await send(translator.download!(taskId, result.url, t)) : null };
}

describe('gemini: Veo on the Gemini API', () => {
  const t = target('gemini', 'https://generativelanguage.googleapis.com/v1beta', 'veo-3.0-generate-001', { personGeneration: 'allow_adult' }, 'gemini-key');

  test('predictLongRunning: prompt, first frame as bytes, size as ratio and resolution, seconds, negative prompt', () => {
    const request = video(gemini).create({ model: 'veo', prompt: 'a wave', image: PNG, size: '1920x1080', seconds: 8, negative_prompt: 'people' }, t);
    assert.equal(request.path, '/models/veo-3.0-generate-001:predictLongRunning');
    assert.equal(request.headers['x-goog-api-key'], 'gemini-key');
    assert.deepEqual(body(request), {
      instances: [{ prompt: 'a wave', image: { bytesBase64Encoded: PNG.split(',')[1], mimeType: 'image/png' } }],
      parameters: { aspectRatio: '16:9', resolution: '1080p', durationSeconds: 8, negativePrompt: 'people', personGeneration: 'allow_adult' },
    });
    assert.deepEqual(body(video(gemini).create({ model: 'veo', prompt: 'tall', aspect_ratio: '9:16' }, t)).parameters, { aspectRatio: '9:16', personGeneration: 'allow_adult' });
  });

  test('refused before any I/O: a seed, an image by URL, a ratio Veo does not make, fractional seconds', () => {
    assert.throws(() => video(gemini).create({ model: 'veo', prompt: 'p', seed: 7 }, t), refused(/seed/));
    assert.throws(() => video(gemini).create({ model: 'veo', prompt: 'p', image: 'https://example.com/a.png' }, t), refused(/data: URI/));
    assert.throws(() => video(gemini).create({ model: 'veo', prompt: 'p', aspect_ratio: '1:1' }, t), refused(/16:9 and 9:16/));
    assert.throws(() => video(gemini).create({ model: 'veo', prompt: 'p', seconds: 5.5 }, t), refused(/whole seconds/));
  });

  test('recorded operations: running, done with a video that takes the key, filtered, failed', () => {
    const name = 'models/veo-3.0-generate-001/operations/9xb2jk4v0a1p';
    assert.deepEqual(video(gemini).created({ name }, t, { model: 'veo', prompt: 'p' }), { taskId: name, state: { status: 'queued' } });
    assert.equal(video(gemini).poll(name, t).path, '/models/veo-3.0-generate-001/operations/9xb2jk4v0a1p');
    assert.equal(video(gemini).poll(name, t).method, 'GET');
    assert.deepEqual(video(gemini).state({ name, metadata: { '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningMetadata' } }, t, name), { status: 'in_progress' });
    const uri = 'https://generativelanguage.googleapis.com/v1beta/files/3kq8yk3xw2ze:download?alt=media';
    const done = { name, done: true, response: { '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse', generateVideoResponse: { generatedSamples: [{ video: { uri } }] } } };
    assert.deepEqual(video(gemini).state(done, t, name), { status: 'completed', result: { url: uri, needsCredential: true, contentType: 'video/mp4' } });
    const filtered = { name, done: true, response: { generateVideoResponse: { raiMediaFilteredCount: 1, raiMediaFilteredReasons: ['The prompt could not be submitted.'] } } };
    assert.deepEqual(video(gemini).state(filtered, t, name), { status: 'failed', error: 'no video was generated: The prompt could not be submitted.' });
    assert.deepEqual(video(gemini).state({ name, done: true, error: { code: 3, message: 'Unsupported duration.' } }, t, name), { status: 'failed', error: 'Unsupported duration.' });
    const download = video(gemini).download!(name, uri, t);
    assert.deepEqual([download.method, download.path, download.headers['x-goog-api-key']], ['GET', uri, 'gemini-key']);
    assert.throws(() => video(gemini).download!(name, 'https://elsewhere.example/v.mp4', t), /not fetched with its key/);
  });

  test('walks a loopback fake: create, polls, then the video fetched with the key', async () => {
    const seen: string[] = [];
    let polls = 0;
    const server: Server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${String(req.headers['x-goog-api-key'])}`);
      req.resume();
      const json = (b: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(b));
      if (req.url!.endsWith(':predictLongRunning')) return json({ name: 'models/veo-2.0-generate-001/operations/op1' });
      if (req.url === '/v1beta/models/veo-2.0-generate-001/operations/op1') {
        polls++;
        return json(polls < 3 ? { name: 'op1' } : { name: 'op1', done: true, response: { generateVideoResponse: { generatedSamples: [{ video: { uri: `http://${req.headers.host}/v1beta/files/v1:download?alt=media` } }] } } });
      }
      if (req.url === '/v1beta/files/v1:download?alt=media') return res.writeHead(200, { 'content-type': 'video/mp4' }).end(MP4);
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const walked = await walk(gemini, target('gemini', `${origin}/v1beta`, 'veo-2.0-generate-001', {}, 'gemini-key'), { model: 'veo', prompt: 'p' });
      assert.deepEqual(walked.states.map((s) => s.status), ['queued', 'in_progress', 'in_progress', 'completed']);
      assert.deepEqual(walked.video, MP4);
      assert.deepEqual(seen, [
        'POST /v1beta/models/veo-2.0-generate-001:predictLongRunning gemini-key',
        ...Array(3).fill('GET /v1beta/models/veo-2.0-generate-001/operations/op1 gemini-key'),
        'GET /v1beta/files/v1:download?alt=media gemini-key',
      ]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('vertex-ai: Veo on Vertex AI', () => {
  let fake: FakeVertex;
  before(async () => {
    fake = await startFakeVertex();
  });
  after(() => fake?.close());
  const offline = (options: Record<string, unknown> = { gcsBucket: 'media', gcsPrefix: 'gw/' }) =>
    target('vertex-ai', `https://us-central1-aiplatform.googleapis.com${VERTEX_BASE_PATH}`, 'veo-3.0-generate-001', options, 'ya29.x');

  test('predictLongRunning with a seed and storageUri (the option, else the files bucket); refused without either', () => {
    const request = video(vertex).create({ model: 'veo', prompt: 'a wave', seed: 42, size: '1280x720' }, offline());
    assert.equal(request.path, '/publishers/google/models/veo-3.0-generate-001:predictLongRunning');
    assert.deepEqual(body(request), { instances: [{ prompt: 'a wave' }], parameters: { aspectRatio: '16:9', sampleCount: 1, storageUri: 'gs://media/gw/video/', seed: 42 } });
    assert.equal(body(video(vertex).create({ model: 'veo', prompt: 'p' }, offline({ videoStorageUri: 'gs://veo-out/runs/' }))).parameters.storageUri, 'gs://veo-out/runs/');
    assert.throws(() => video(vertex).create({ model: 'veo', prompt: 'p' }, offline({})), refused(/videoStorageUri or options.gcsBucket/));
  });

  test('recorded operations: fetchPredictOperation until done, a gcsUri read through the JSON API, inline bytes as a data: URL', () => {
    const name = `projects/p1/locations/us-central1/publishers/google/models/veo-3.0-generate-001/operations/6c4d0a2e-1111-4b53-9d4e-2a8f0e3c9b71`;
    const poll = video(vertex).poll(name, offline());
    assert.deepEqual([poll.method, poll.path, body(poll)], ['POST', '/publishers/google/models/veo-3.0-generate-001:fetchPredictOperation', { operationName: name }]);
    assert.deepEqual(video(vertex).state({ name }, offline(), name), { status: 'in_progress' });
    const done = { name, done: true, response: { '@type': 'type.googleapis.com/cloud.ai.large_models.vision.GenerateVideoResponse', raiMediaFilteredCount: 0, videos: [{ gcsUri: 'gs://media/gw/video/123/sample_0.mp4', mimeType: 'video/mp4' }] } };
    assert.deepEqual(video(vertex).state(done, offline(), name), { status: 'completed', result: { url: 'gs://media/gw/video/123/sample_0.mp4', needsCredential: true, contentType: 'video/mp4' } });
    const inline = { name, done: true, response: { videos: [{ bytesBase64Encoded: MP4.toString('base64'), mimeType: 'video/mp4' }] } };
    assert.deepEqual(video(vertex).state(inline, offline(), name), { status: 'completed', result: { url: `data:video/mp4;base64,${MP4.toString('base64')}`, contentType: 'video/mp4' } });
    assert.deepEqual(video(vertex).state({ name, done: true, response: { raiMediaFilteredCount: 1 } }, offline(), name), { status: 'failed', error: 'no video was generated (filtered by the provider\'s safety filters)' });
    assert.equal(video(vertex).download!(name, 'gs://media/gw/video/123/sample_0.mp4', offline()).path, 'https://storage.googleapis.com/storage/v1/b/media/o/gw%2Fvideo%2F123%2Fsample_0.mp4?alt=media');
  });

  test('walks the Vertex fake: create, fetchPredictOperation polls, the video read from Cloud Storage with the token', async () => {
    let polls = 0;
    const seen: string[] = [];
    fake.route = async (req, res, url) => {
      const model = `${VERTEX_BASE_PATH}/publishers/google/models/veo-2.0-generate-001`;
      // Only this model's routes read the body: the fake's own (storage) read theirs.
      if (!url.pathname.startsWith(model)) return false;
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const json = (b: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(b));
      seen.push(`${url.pathname} ${Buffer.concat(chunks).toString()}`);
      if (url.pathname === `${model}:predictLongRunning`) return json({ name: 'projects/p1/locations/us-central1/publishers/google/models/veo-2.0-generate-001/operations/op-9' }), true;
      if (url.pathname === `${model}:fetchPredictOperation`) {
        if (++polls < 2) return json({ name: 'op-9' }), true;
        fake.objects.set('gs://veo-out/runs/op-9/sample_0.mp4', { bucket: 'veo-out', name: 'runs/op-9/sample_0.mp4', data: MP4, contentType: 'video/mp4' });
        return json({ name: 'op-9', done: true, response: { videos: [{ gcsUri: 'gs://veo-out/runs/op-9/sample_0.mp4', mimeType: 'video/mp4' }] } }), true;
      }
      return false;
    };
    const t = target('vertex-ai', `${fake.origin}${VERTEX_BASE_PATH}`, 'veo-2.0-generate-001', { videoStorageUri: 'gs://veo-out/runs/', storageUrl: fake.origin }, fake.token);
    const walked = await walk(vertex, t, { model: 'veo', prompt: 'p', seconds: 5 });
    assert.deepEqual(walked.states.map((s) => s.status), ['queued', 'in_progress', 'completed']);
    assert.deepEqual(walked.video, MP4);
    assert.equal(seen.length, 3);
    assert.deepEqual(JSON.parse(seen[0]!.split(' ').slice(1).join(' ')).parameters, { durationSeconds: 5, sampleCount: 1, storageUri: 'gs://veo-out/runs/' });
    assert.deepEqual(fake.unauthorized, [], 'every request carried the token');
    assert.ok(fake.requests.some((r) => r.path === '/storage/v1/b/veo-out/o/runs%2Fop-9%2Fsample_0.mp4?alt=media'));
  });
});

describe('bedrock: Nova Reel', () => {
  let aws: FakeAws;
  before(async () => {
    aws = await startFakeAws();
  });
  after(() => aws?.close());
  const offline = (options: Record<string, unknown> = { s3Bucket: 'team-files' }) =>
    target('bedrock', 'https://bedrock-runtime.us-east-1.amazonaws.com', 'amazon.nova-reel-v1:1', { region: 'us-east-1', accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret', ...options });

  test('StartAsyncInvoke: one shot with a first frame, longer videos as several shots, the output location', () => {
    const one = video(bedrock).create({ model: 'reel', prompt: 'a wave', image: PNG, seed: 3 }, offline());
    assert.deepEqual([one.method, one.path], ['POST', '/async-invoke']);
    assert.deepEqual(body(one), {
      modelId: 'amazon.nova-reel-v1:1',
      modelInput: { taskType: 'TEXT_VIDEO', textToVideoParams: { text: 'a wave', images: [{ format: 'png', source: { bytes: PNG.split(',')[1] } }] }, videoGenerationConfig: { durationSeconds: 6, fps: 24, dimension: '1280x720', seed: 3 } },
      outputDataConfig: { s3OutputDataConfig: { s3Uri: 's3://team-files/aigw/video/' } },
    });
    const long = body(video(bedrock).create({ model: 'reel', prompt: 'a trip', seconds: 18 }, offline({ videoOutputS3Uri: 's3://reels/out/' })));
    assert.deepEqual(long.modelInput, { taskType: 'MULTI_SHOT_AUTOMATED', multiShotAutomatedParams: { text: 'a trip' }, videoGenerationConfig: { durationSeconds: 18, fps: 24, dimension: '1280x720' } });
    assert.equal(long.outputDataConfig.s3OutputDataConfig.s3Uri, 's3://reels/out/');
  });

  test('refused before any I/O: no output location, other models, sizes, lengths, a negative prompt, a GIF first frame', () => {
    const reel = (request: Partial<VideoRequest>, options?: Record<string, unknown>) => () => video(bedrock).create({ model: 'reel', prompt: 'p', ...request }, offline(options));
    assert.throws(reel({}, { s3Bucket: undefined }), refused(/videoOutputS3Uri or options.s3Bucket/));
    assert.throws(() => video(bedrock).create({ model: 'x', prompt: 'p' }, { ...offline(), upstreamModel: 'luma.ray-v2:0' }), refused(/Nova Reel models do/));
    assert.throws(reel({ size: '1920x1080' }), refused(/1280x720/));
    assert.throws(reel({ seconds: 10 }), refused(/multiples of 6/));
    assert.throws(reel({ negative_prompt: 'rain' }), refused(/negative_prompt/));
    assert.throws(reel({ image: 'data:image/gif;base64,R0lGOD==' }), refused(/PNG or JPEG/));
    assert.throws(reel({ image: PNG, seconds: 12 }), refused(/longer than 6 seconds/));
  });

  test('recorded GetAsyncInvoke answers; the ARN one path segment', () => {
    const arn = 'arn:aws:bedrock:us-east-1:123456789012:async-invoke/q1w2e3r4t5y6';
    assert.deepEqual(video(bedrock).created({ invocationArn: arn }, offline(), { model: 'reel', prompt: 'p' }), { taskId: arn, state: { status: 'queued' } });
    assert.equal(video(bedrock).poll(arn, offline()).path, '/async-invoke/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aasync-invoke%2Fq1w2e3r4t5y6');
    const answer = (status: string, extra = {}) => ({ invocationArn: arn, modelArn: 'arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-reel-v1:1', status, submitTime: '2025-01-01T00:00:00Z', outputDataConfig: { s3OutputDataConfig: { s3Uri: 's3://team-files/aigw/video/q1w2e3r4t5y6' } }, ...extra });
    assert.deepEqual(video(bedrock).state(answer('InProgress'), offline(), arn), { status: 'in_progress' });
    assert.deepEqual(video(bedrock).state(answer('Completed'), offline(), arn), { status: 'completed', result: { url: 's3://team-files/aigw/video/q1w2e3r4t5y6/output.mp4', needsCredential: true, contentType: 'video/mp4' } });
    assert.deepEqual(video(bedrock).state(answer('Failed', { failureMessage: 'Internal Server Error' }), offline(), arn), { status: 'failed', error: 'Internal Server Error' });
    assert.equal(video(bedrock).download!(arn, 's3://team-files/aigw/video/q1w2e3r4t5y6/output.mp4', offline()).path, 'https://s3.us-east-1.amazonaws.com/team-files/aigw/video/q1w2e3r4t5y6/output.mp4');
  });

  test('walks the AWS fake: every request SigV4-checked, the video read from S3', async () => {
    const arn = `arn:aws:bedrock:${REGION}:123456789012:async-invoke/a1s2d3f4g5h6`;
    let polls = 0;
    aws.runtime = (received, res) => {
      const json = (b: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(b));
      if (received.method === 'POST' && received.url === '/async-invoke') return json({ invocationArn: arn });
      const status = ++polls < 3 ? 'InProgress' : 'Completed';
      if (status === 'Completed') aws.objects.set('reels/out/a1s2d3f4g5h6/output.mp4', MP4);
      json({ invocationArn: arn, status, outputDataConfig: { s3OutputDataConfig: { s3Uri: 's3://reels/out/a1s2d3f4g5h6' } } });
    };
    const t = target('bedrock', aws.origin, 'amazon.nova-reel-v1:0', { region: REGION, accessKeyId: ACCESS_KEY, secretAccessKey: SECRET, s3Endpoint: `${aws.origin}/s3`, videoOutputS3Uri: 's3://reels/out' });
    const walked = await walk(bedrock, t, { model: 'reel', prompt: 'p' });
    assert.deepEqual(walked.states.map((s) => s.status), ['queued', 'in_progress', 'in_progress', 'completed']);
    assert.deepEqual(walked.video, MP4);
    assert.deepEqual(aws.requests.map((r) => [r.method, r.url, r.service, r.problem]), [
      ['POST', '/async-invoke', 'bedrock', null],
      ...Array(3).fill(['GET', `/async-invoke/${encodeURIComponent(arn)}`, 'bedrock', null]),
      ['GET', '/s3/reels/out/a1s2d3f4g5h6/output.mp4', 's3', null],
    ]);
  });
});
