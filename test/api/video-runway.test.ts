/**
 * Video generation on runway through a real gateway against the loopback Runway fake: gen4_turbo from a first
 * frame (POST /image_to_video with the version header and key), the job following the task PENDING -> RUNNING
 * 0.3 -> RUNNING 0.7 -> SUCCEEDED, its public MP4 handed to the caller, the length sent billed though the caller
 * asked none; text to video on a model that allows it; a gen4_turbo request without an image refused before any
 * call; a task failed on SAFETY failing the job with Runway's reason.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MP4_BYTES, RUNWAY_KEY, RUNWAY_VERSION, startFakeRunway, type FakeRunway } from '../fakes/runway.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const config = (baseUrl: string) => `
jobs:
  pollIntervalMs: 10
video:
  pollIntervalMs: 20
providers:
  runway: { baseUrl: ${baseUrl}, apiKey: ${RUNWAY_KEY} }
models:
  - id: gen4-video
    provider: runway
    upstreamModel: gen4_turbo
    pricing: { videoSecond: 0.05 }
  - id: veo
    provider: runway
    upstreamModel: veo3.1
pipelines:
  - name: video
    routes: [/v1/video/generations]
    plugins: [auth, { usage: { flushIntervalMs: 10 } }]
`;

const FRAME = 'data:image/png;base64,iVBORw0KGgo=';

describe('video generation on runway', () => {
  let fake: FakeRunway;
  let gw: TestGateway;
  let key: string;
  const auth = () => ({ authorization: `Bearer ${key}` });
  const job = async (id: string) => (await (await fetch(`${gw.url}/v1/video/generations/${id}`, { headers: auth() })).json()) as Record<string, any>;

  before(async () => {
    fake = await startFakeRunway();
    gw = await startTestGateway(config(fake.baseUrl));
    key = await gw.createKey({ scopes: { capabilities: ['video-generation'] } });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('gen4_turbo from a first frame: the task is created and read to SUCCEEDED; the public MP4; the length sent is billed', async () => {
    const before = fake.requests.length;
    const created = await postJson(`${gw.url}/v1/video/generations`, { model: 'gen4-video', prompt: 'waves at dusk', image: FRAME, aspect_ratio: '16:9', seed: 3 }, auth());
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.status, 'queued');
    const create = fake.requests[before]!;
    assert.deepEqual([create.method, create.path], ['POST', '/v1/image_to_video']);
    assert.deepEqual(create.json, { model: 'gen4_turbo', promptImage: FRAME, promptText: 'waves at dusk', ratio: '1280:720', duration: 5, seed: 3 });
    const id = created.body.id as string;
    await eventually(async () => assert.equal((await job(id)).status, 'completed'), 5000, 10);
    const done = await job(id);
    const task = [...fake.tasks.values()].find((t) => t.body.promptText === 'waves at dusk')!;
    assert.deepEqual(fake.polls.filter((p) => p.id === task.id).map((p) => p.progress === undefined ? p.status : `${p.status} ${p.progress}`), ['PENDING', 'RUNNING 0.3', 'RUNNING 0.7', 'SUCCEEDED']);
    for (const r of fake.requests.slice(before).filter((r) => !r.path.startsWith('/outputs/'))) {
      assert.equal(r.headers.authorization, `Bearer ${RUNWAY_KEY}`);
      assert.equal(r.headers['x-runway-version'], RUNWAY_VERSION);
    }
    assert.equal(done.url, `${fake.origin}/outputs/${task.id}.mp4`, 'Runway\'s public URL, as it is');
    assert.equal(done.seconds, 5, 'the length sent on create, though the caller asked none');
    assert.deepEqual(Buffer.from(await (await fetch(done.url)).arrayBuffer()), MP4_BYTES);
    await eventually(async () => {
      const rows = await gw.gateway.services.db.query<{ video_seconds: number; cost_usd: string }>('SELECT video_seconds, cost_usd FROM usage_records WHERE request_id = $1', [id]);
      assert.deepEqual(rows.map((r) => [Number(r.video_seconds), Number(r.cost_usd)]), [[5, 0.25]]);
    });
  });

  test('text to video on veo3.1: POST /text_to_video with the size as its resolution and the asked length', async () => {
    const created = await postJson(`${gw.url}/v1/video/generations`, { model: 'veo', prompt: 'a quiet forest', size: '1080x1920', seconds: 6 }, auth());
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const create = fake.requests.filter((r) => r.method === 'POST').at(-1)!;
    assert.equal(create.path, '/v1/text_to_video');
    assert.deepEqual(create.json, { model: 'veo3.1', promptText: 'a quiet forest', ratio: '1080:1920', duration: 6 });
    await eventually(async () => assert.equal((await job(created.body.id)).status, 'completed'), 5000, 10);
    assert.equal((await job(created.body.id)).seconds, 6);
  });

  test('refusals: gen4_turbo without an image, before any call; a task failed on SAFETY fails the job with Runway\'s reason', async () => {
    const count = fake.requests.length;
    const refused = await postJson(`${gw.url}/v1/video/generations`, { model: 'gen4-video', prompt: 'no frame' }, auth());
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.match(refused.body.error.message, /gen4_turbo makes video from an image/);
    assert.equal(fake.requests.length, count, 'nothing sent');
    const created = await postJson(`${gw.url}/v1/video/generations`, { model: 'gen4-video', prompt: 'something unsafe', image: FRAME }, auth());
    assert.equal(created.status, 200, JSON.stringify(created.body));
    await eventually(async () => assert.equal((await job(created.body.id)).status, 'failed'), 5000, 10);
    const failed = await job(created.body.id);
    assert.equal(failed.url, null);
    assert.match(failed.error.message, /SAFETY\.INPUT\.TEXT: The prompt was flagged/);
  });
});
