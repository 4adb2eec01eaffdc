/**
 * fal video jobs through a real gateway against the loopback fal (test/fakes/fal.ts): the job submitted to the
 * model's path with its input and the Key credential, the `video.poll` sweep reading the status under the app
 * (with its logs) and, once COMPLETED, the response URL in the same poll (VideoTranslator.followUp), the CDN URL
 * given to the caller as it is (public: no credential needed), the asked seconds metered, and a request fal
 * fails (an error in its status, or its response answering an error) ending the job with fal's reason.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { findVideoJob } from '../../core/store/video-jobs.ts';
import { FAL_KEY, startFakeFal, type FakeFal } from '../fakes/fal.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const config = (origin: string) => `
jobs:
  pollIntervalMs: 10
video:
  pollIntervalMs: 20
  maxJobMinutes: 30
providers:
  fal-ai: { baseUrl: ${origin}, apiKey: ${FAL_KEY} }
models:
  - id: kling
    provider: fal-ai
    upstreamModel: fal-ai/kling-video/v2.1/master/text-to-video
    pricing: { videoSecond: 0.1 }
pipelines:
  - name: video
    routes: [/v1/video/generations]
    plugins: [auth, { usage: { flushIntervalMs: 10 } }]
`;

describe('fal-ai: video jobs', () => {
  let fake: FakeFal;
  let gw: TestGateway;
  let key: string;
  const job = async (id: string) => (await (await fetch(`${gw.url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as Record<string, any>;

  before(async () => {
    fake = await startFakeFal();
    gw = await startTestGateway(config(fake.origin));
    key = await gw.createKey({ scopes: { capabilities: ['video-generation'] } });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('submitted, its status polled through IN_QUEUE and IN_PROGRESS, then COMPLETED and its output read; the CDN URL given as it is; metered', async () => {
    const start = fake.requests.length;
    const statuses = fake.statuses.length;
    const created = await postJson(`${gw.url}/v1/video/generations`, { model: 'kling', prompt: 'a fox running', seconds: 5, size: '1280x720' }, { authorization: `Bearer ${key}` });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.status, 'queued');
    const submit = fake.requests[start]!;
    assert.deepEqual([submit.method, submit.path, submit.headers.authorization], ['POST', '/fal-ai/kling-video/v2.1/master/text-to-video', `Key ${FAL_KEY}`]);
    assert.deepEqual(submit.json, { prompt: 'a fox running', duration: '5', aspect_ratio: '16:9' });
    const { id } = created.body as { id: string };
    const task = (await findVideoJob(gw.gateway.services.db, null, id))!.providerTaskId;
    assert.match(task, /^fal-ai\/kling-video\/requests\/[0-9a-f-]{36}$/);

    await eventually(async () => assert.equal((await job(id)).status, 'completed'), 10_000, 20);
    const done = await job(id);
    assert.equal(done.url, `${fake.cdnOrigin}/files/video.mp4`, 'fal\'s CDN is public: the caller fetches it there');
    assert.equal(done.seconds, 5, 'fal says nothing of the length: the asked seconds');
    const polls = fake.requests.slice(start + 1).filter((r) => r.server === 'queue');
    assert.deepEqual(polls.map((r) => `${r.method} ${r.path}${r.query.logs ? '?logs=1' : ''}`), [...Array(3).fill(`GET /${task}/status?logs=1`), `GET /${task}`]);
    assert.ok(polls.every((r) => r.headers.authorization === `Key ${FAL_KEY}`));
    assert.deepEqual(fake.statuses.slice(statuses), ['IN_QUEUE', 'IN_QUEUE', 'IN_PROGRESS', 'COMPLETED']);

    await eventually(async () => {
      const rows = await gw.gateway.services.db.query<{ video_seconds: number; cost_usd: string; provider: string; status: string }>(
        'SELECT video_seconds, cost_usd, provider, status FROM usage_records WHERE request_id = $1', [id]);
      assert.deepEqual(rows.map((r) => [Number(r.video_seconds), Number(r.cost_usd), r.provider, r.status]), [[5, 0.5, 'fal-ai', 'completed']]);
    });
  });

  test('a request fal fails (its response URL answers 422) ends the job with fal\'s detail', async () => {
    fake.resultError = { status: 422, body: { detail: [{ loc: ['body', 'prompt'], msg: 'Prompt was flagged', type: 'content_policy_violation' }] } };
    const created = await postJson(`${gw.url}/v1/video/generations`, { model: 'kling', prompt: 'something flagged' }, { authorization: `Bearer ${key}` });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const { id } = created.body as { id: string };
    await eventually(async () => assert.equal((await job(id)).status, 'failed'), 10_000, 20);
    const failed = await job(id);
    assert.equal(failed.error.code, 'UPSTREAM_BAD_REQUEST');
    assert.match(failed.error.message, /Prompt was flagged \(body\.prompt\)/);
    assert.equal(failed.url, null);
  });

  test('a request fal reports COMPLETED with an error ends the job with that error, its response not read', async () => {
    fake.statusError = 'Runner disconnected';
    const created = await postJson(`${gw.url}/v1/video/generations`, { model: 'kling', prompt: 'a crash' }, { authorization: `Bearer ${key}` });
    const { id } = created.body as { id: string };
    const task = (await findVideoJob(gw.gateway.services.db, null, id))!.providerTaskId;
    await eventually(async () => assert.equal((await job(id)).status, 'failed'), 10_000, 20);
    assert.match((await job(id)).error.message, /fal-ai failed the video: Runner disconnected/);
    assert.equal(fake.requests.filter((r) => r.path === `/${task}`).length, 0);
  });
});
