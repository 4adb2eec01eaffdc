/**
 * Video jobs on the OpenAI-compatible hosts' task APIs through a real gateway, against a loopback fake of each
 * (test/fakes/compatible-video.ts): the task each host is asked for (path, credential, body), the job walking
 * queued -> running -> done as the host's polls answer, the public video URL handed on as it is, the seconds
 * made as the host reports them (else the asked ones), failures with the host's reason, the host's own refusal
 * of a creation, and the gateway's refusals before any I/O.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { findVideoJob } from '../../core/store/video-jobs.ts';
import { startFakeCompatibleVideo, type FakeCompatibleVideo, type VideoHost } from '../fakes/compatible-video.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const config = (fake: FakeCompatibleVideo) => `
jobs:
  pollIntervalMs: 10
video:
  pollIntervalMs: 20
  maxJobMinutes: 30
providers:
  together-ai: { baseUrl: ${fake.hostBase('together-ai')}, apiKey: together-ai-key }
  xai: { baseUrl: ${fake.hostBase('xai')}, apiKey: xai-key }
  zhipu: { baseUrl: ${fake.hostBase('zhipu')}, apiKey: zhipu-key }
  volcengine: { baseUrl: ${fake.hostBase('volcengine')}, apiKey: volcengine-key }
models:
  - { id: hailuo, provider: together-ai, upstreamModel: minimax/hailuo-02, pricing: { videoSecond: 0.05 } }
  - { id: grok-video, provider: xai, upstreamModel: grok-imagine-video, pricing: { videoSecond: 0.05 } }
  - { id: cogvideo, provider: zhipu, upstreamModel: cogvideox-3, pricing: { videoSecond: 0.05 } }
  - { id: seedance, provider: volcengine, upstreamModel: doubao-seedance-1-0-pro-250528, pricing: { videoSecond: 0.05 } }
pipelines:
  - name: video
    routes: [/v1/video/generations]
    plugins: [auth]
`;

interface Case {
  host: VideoHost;
  model: string;
  request: Record<string, unknown>;
  path: string;
  body: Record<string, unknown>;
  /** What the host's polls answered, in order, on the way to the end. */
  walk: string[];
  /** Seconds billed: the host's count where its answer gives one, else the asked ones. */
  seconds: number;
}

const CASES: Case[] = [
  {
    host: 'together-ai', model: 'hailuo', request: { seconds: 6, size: '1366x768' }, path: '/together/v2/videos',
    body: { model: 'minimax/hailuo-02', prompt: 'a lighthouse at dusk', seconds: '6', width: 1366, height: 768 },
    walk: ['queued', 'in_progress', 'completed'], seconds: 6,
  },
  {
    host: 'xai', model: 'grok-video', request: { seconds: 8, aspect_ratio: '9:16', image: 'https://img.example/first.png' }, path: '/xai/v1/videos/generations',
    body: { model: 'grok-imagine-video', prompt: 'a lighthouse at dusk', duration: 8, aspect_ratio: '9:16', image: { url: 'https://img.example/first.png' } },
    walk: ['202', 'pending', 'done'], seconds: 8,
  },
  {
    host: 'zhipu', model: 'cogvideo', request: { seconds: 10, size: '1920x1080' }, path: '/zhipu/api/paas/v4/videos/generations',
    body: { model: 'cogvideox-3', prompt: 'a lighthouse at dusk', duration: 10, size: '1920x1080' },
    walk: ['PROCESSING', 'PROCESSING', 'SUCCESS'], seconds: 10,
  },
  {
    host: 'volcengine', model: 'seedance', request: { seconds: 5, size: '1248x704', seed: 11 }, path: '/ark/api/v3/contents/generations/tasks',
    body: { model: 'doubao-seedance-1-0-pro-250528', content: [{ type: 'text', text: 'a lighthouse at dusk --ratio 16:9 --resolution 720p --duration 5 --seed 11' }] },
    walk: ['queued', 'running', 'succeeded'], seconds: 5,
  },
];

describe('video jobs on the OpenAI-compatible hosts', () => {
  let fake: FakeCompatibleVideo;
  let gw: TestGateway;
  let key: string;

  const create = (body: Record<string, unknown>) => postJson(`${gw.url}/v1/video/generations`, body, { authorization: `Bearer ${key}` });
  const job = async (id: string) => {
    const response = await fetch(`${gw.url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${key}` } });
    return await response.json() as Record<string, any>;
  };
  const taskOf = async (id: string) => (await findVideoJob(gw.gateway.services.db, null, id))!.providerTaskId;
  const creates = () => fake.calls.filter((c) => c.method === 'POST').length;

  before(async () => {
    fake = await startFakeCompatibleVideo();
    gw = await startTestGateway(config(fake));
    key = await gw.createKey({ scopes: { capabilities: ['video-generation'] } });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  for (const c of CASES) {
    test(`${c.host}: the task asked for with the host's key, polled through its walk to completed, the public video handed on`, async () => {
      const started = await create({ model: c.model, prompt: 'a lighthouse at dusk', ...c.request });
      assert.equal(started.status, 200, JSON.stringify(started.body));
      assert.equal(started.headers.get('x-provider'), c.host);
      assert.match(started.body.id, /^video-/);
      assert.equal(started.body.url, null);
      const sent = fake.calls.filter((call) => call.host === c.host && call.method === 'POST').at(-1)!;
      assert.equal(sent.path, c.path);
      assert.equal(sent.headers.authorization, `Bearer ${c.host}-key`);
      assert.equal(sent.headers['content-type'], 'application/json');
      assert.deepEqual(sent.body, c.body);

      const task = await taskOf(started.body.id);
      await eventually(async () => assert.equal((await job(started.body.id)).status, 'completed'), 5000, 10);
      assert.deepEqual(fake.answered.get(task), c.walk, 'polled until the host said it was done, and no further');
      for (const poll of fake.polls(task)) {
        assert.equal(poll.headers.authorization, `Bearer ${c.host}-key`);
        assert.equal(poll.body, null);
      }
      const done = await job(started.body.id);
      assert.equal(done.url, `${fake.origin}/files/${task}.mp4`, 'a public URL goes to the caller as the host gave it');
      assert.equal(done.seconds, c.seconds);
      assert.equal(done.progress, 100);
      assert.equal(done.error, null);
    });
  }

  test('a task each host fails ends the job failed with the host\'s reason', async () => {
    const reasons: Record<VideoHost, RegExp> = {
      'together-ai': /the prompt was rejected/, xai: /video generation failed/, zhipu: /no reason given/, volcengine: /sensitive information/,
    };
    for (const c of CASES) {
      const started = await create({ model: c.model, prompt: 'a volcano about to explode' });
      assert.equal(started.status, 200, JSON.stringify(started.body));
      await eventually(async () => assert.equal((await job(started.body.id)).status, 'failed'), 5000, 10);
      const failed = await job(started.body.id);
      assert.equal(failed.url, null, c.host);
      assert.equal(failed.error.code, 'UPSTREAM_ERROR', c.host);
      assert.match(failed.error.message, reasons[c.host], c.host);
    }
  });

  test('a creation the host refuses fails the call with the host\'s message; nothing is recorded', async () => {
    for (const c of CASES) {
      const refused = await create({ model: c.model, prompt: 'something forbidden' });
      assert.equal(refused.status, 400, `${c.host}: ${JSON.stringify(refused.body)}`);
      assert.match(refused.body.error.message, /violates the usage guidelines/, c.host);
    }
  });

  test('what a host cannot make is refused before any I/O', async () => {
    const before = creates();
    for (const [model, body] of [
      ['grok-video', { seed: 3 }], ['grok-video', { size: '1920x1080' }], ['cogvideo', { seconds: 7 }], ['cogvideo', { negative_prompt: 'rain' }],
      ['seedance', { negative_prompt: 'rain' }], ['seedance', { aspect_ratio: '2:1' }], ['hailuo', { size: '1280x720', aspect_ratio: '9:16' }],
    ] as const) {
      const refused = await create({ model, prompt: 'x', ...body });
      assert.equal(refused.status, 400, `${model} ${JSON.stringify(body)}`);
      assert.equal(refused.body.error.code, 'CAPABILITY_NOT_SUPPORTED', JSON.stringify(refused.body));
    }
    assert.equal(creates(), before, 'no refusal reached a host');
  });
});
