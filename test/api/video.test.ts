/**
 * Video generation jobs through a real gateway against a fake of OpenAI's video API: a job walks queued ->
 * in_progress -> completed as the fake moves it, its video is streamed by the gateway with the provider's
 * credential, and it is metered once (usage record with video_seconds and cost, the budget charged once); a
 * failed job; transient poll failures; a job whose provider is gone or that runs too long; tenants; refusals.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { videoWork } from '../../core/api/video-poll.ts';
import { findVideoJob, insertVideoJob, newVideoJobId } from '../../core/store/video-jobs.ts';
import { startFakeOpenAiVideo, type FakeOpenAiVideo } from '../fakes/openai-video.ts';
import { eventually } from '../helpers/eventually.ts';
import { ADMIN_TOKEN, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const config = (origin: string) => `
jobs:
  pollIntervalMs: 10
video:
  pollIntervalMs: 20
  maxJobMinutes: 30
providers:
  openai: { baseUrl: ${origin}/v1, apiKey: sk-upstream }
  anthropic: { baseUrl: ${origin}/anthropic, apiKey: sk-ant }
models:
  - id: sora
    provider: openai
    upstreamModel: sora-2
    pricing: { videoSecond: 0.1 }
  - id: claude
    provider: anthropic
pipelines:
  - name: video
    routes: [/v1/video/generations, /v1/usage, /v1/budget]
    plugins: [auth, ratelimit, budget, { usage: { flushIntervalMs: 10 } }]
`;

const CAPABILITIES = ['video-generation', 'usage:read', 'budget:read'];

describe('video generation jobs', () => {
  let fake: FakeOpenAiVideo;
  let gw: TestGateway;
  let key: string;
  let keyId: string;
  let budgetId: string;
  let otherKey: string;

  const auth = (k = key) => ({ authorization: `Bearer ${k}` });
  const create = (body: unknown, k = key) => postJson(`${gw.url}/v1/video/generations`, body, auth(k));
  const get = async (path: string, k = key) => {
    const response = await fetch(`${gw.url}${path}`, { headers: auth(k), redirect: 'manual' });
    const text = await response.text();
    let body: any = text;
    try { body = JSON.parse(text); } catch { /* not JSON */ }
    return { status: response.status, headers: response.headers, body };
  };
  const job = async (id: string) => (await get(`/v1/video/generations/${id}`)).body;
  const upstreamIdOf = async (id: string) => (await findVideoJob(gw.gateway.services.db, null, id))!.providerTaskId;
  const usageRows = (requestId: string) => gw.gateway.services.db.query<{ video_seconds: number; cost_usd: string; modality: string; status: string; error_code: string | null; endpoint: string; provider: string; model: string; requests: number }>(
    'SELECT video_seconds, cost_usd, modality, status, error_code, endpoint, provider, model, requests FROM usage_records WHERE request_id = $1', [requestId]);
  const spent = async () => {
    const page = (await get('/v1/budget')).body as { data: Array<{ id: string; spent_usd: number }> };
    return page.data.find((b) => b.id === budgetId)?.spent_usd;
  };

  before(async () => {
    fake = await startFakeOpenAiVideo();
    gw = await startTestGateway(config(fake.origin));
    const created = await postJson(`${gw.url}/admin/v1/keys`, { name: 'video', scopes: { capabilities: CAPABILITIES } }, { authorization: `Bearer ${ADMIN_TOKEN}` });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    ({ id: keyId, key } = created.body as { id: string; key: string });
    const budget = await postJson(`${gw.url}/admin/v1/budgets`, { scope: 'key', scopeId: keyId, period: 'daily', limitUsd: 10 }, { authorization: `Bearer ${ADMIN_TOKEN}` });
    assert.equal(budget.status, 201, JSON.stringify(budget.body));
    budgetId = budget.body.id;
    const tenant = await postJson(`${gw.url}/admin/v1/tenants`, { id: 'other', name: 'Other' }, { authorization: `Bearer ${ADMIN_TOKEN}` });
    assert.equal(tenant.status, 201, JSON.stringify(tenant.body));
    otherKey = await gw.createKey({ tenantId: 'other', scopes: { capabilities: ['video-generation'] } });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('a job walks queued -> in_progress -> completed; the video is streamed with the provider\'s key; metered once', async () => {
    const created = await create({ model: 'sora', prompt: 'A calico cat playing a piano', seconds: 8, size: '1280x720' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.headers.get('x-provider'), 'openai');
    const { id } = created.body;
    assert.match(id, /^video-[0-9a-f-]{36}$/);
    assert.deepEqual({ ...created.body, id: undefined, created_at: undefined }, {
      id: undefined, object: 'video.generation', model: 'sora', status: 'queued', progress: 0, prompt: 'A calico cat playing a piano',
      created_at: undefined, completed_at: null, url: null, seconds: null, error: null,
    });
    assert.ok(Math.abs(created.body.created_at - Date.now() / 1000) < 60);
    const sent = fake.calls.find((c) => c.method === 'POST')!;
    assert.equal(sent.path, '/v1/videos');
    assert.equal(sent.headers.authorization, 'Bearer sk-upstream');
    assert.deepEqual(sent.body, { model: 'sora-2', prompt: 'A calico cat playing a piano', seconds: '8', size: '1280x720' });
    const upstream = await upstreamIdOf(id);

    await eventually(async () => assert.ok(fake.polls(upstream).length >= 2), 5000, 10);
    assert.equal((await job(id)).status, 'queued');
    assert.equal(fake.polls(upstream)[0]!.headers.authorization, 'Bearer sk-upstream');
    fake.advance(upstream);
    await eventually(async () => assert.deepEqual([(await job(id)).status, (await job(id)).progress], ['in_progress', 33]), 5000, 10);
    fake.advance(upstream);
    await eventually(async () => assert.equal((await job(id)).progress, 66), 5000, 10);
    assert.equal(await spent(), 0, 'the request that starts a job costs nothing');
    fake.advance(upstream);
    await eventually(async () => assert.equal((await job(id)).status, 'completed'), 5000, 10);

    const done = await job(id);
    assert.equal(done.progress, 100);
    assert.equal(done.seconds, 8);
    assert.equal(done.error, null);
    assert.ok(done.completed_at >= done.created_at);
    assert.equal(done.url, `${gw.url}/v1/video/generations/${id}/content`, 'the provider\'s URL needs its key: the gateway serves it');
    const polls = fake.polls(upstream).length;

    const video = await fetch(done.url, { headers: auth() });
    assert.equal(video.status, 200);
    assert.equal(video.headers.get('content-type'), 'video/mp4');
    assert.deepEqual(Buffer.from(await video.arrayBuffer()), Buffer.concat(fake.chunks));
    const download = fake.calls.at(-1)!;
    assert.equal(download.path, `/v1/videos/${upstream}/content`);
    assert.equal(download.headers.authorization, 'Bearer sk-upstream');

    await eventually(async () => {
      const rows = await usageRows(id);
      assert.equal(rows.length, 1, JSON.stringify(rows));
      assert.deepEqual(rows.map((r) => [Number(r.video_seconds), Number(r.cost_usd), r.modality, r.status, r.endpoint, r.provider, r.model, r.requests]),
        [[8, 0.8, 'video', 'completed', '/v1/video/generations', 'openai', 'sora', 1]]);
    });
    await eventually(async () => assert.equal(await spent(), 0.8));
    // Reported again (a sweep on another instance, a retry): recorded and charged once.
    const record = (await findVideoJob(gw.gateway.services.db, null, id))!;
    assert.equal(record.metered, true);
    await gw.gateway.meterWork(videoWork(record));
    await sleep(100);
    assert.equal((await usageRows(id)).length, 1);
    assert.equal(await spent(), 0.8);
    assert.equal(fake.polls(upstream).length, polls, 'an ended job is not polled again');

    const usage = await get(`/v1/usage?from=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}&group_by=modality`);
    assert.equal(usage.status, 200, JSON.stringify(usage.body));
    assert.equal(usage.body.data.find((row: { modality: string }) => row.modality === 'video')?.video_seconds, 8);
  });

  test('a job the provider fails: status failed with its reason, no video, metered as failed with no seconds', async () => {
    const created = await create({ model: 'sora', prompt: 'A volcano about to explode', aspect_ratio: '9:16' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const { id } = created.body;
    const sent = fake.calls.filter((c) => c.method === 'POST').at(-1)!;
    assert.deepEqual(sent.body, { model: 'sora-2', prompt: 'A volcano about to explode', size: '720x1280' });
    const upstream = await upstreamIdOf(id);
    fake.advance(upstream);
    fake.advance(upstream);
    await eventually(async () => assert.equal((await job(id)).status, 'failed'), 5000, 10);
    const failed = await job(id);
    assert.equal(failed.url, null);
    assert.equal(failed.seconds, null);
    assert.equal(failed.error.code, 'UPSTREAM_ERROR');
    assert.match(failed.error.message, /blocked by moderation/);
    const content = await get(`/v1/video/generations/${id}/content`);
    assert.equal(content.status, 404);
    await eventually(async () => {
      const rows = await usageRows(id);
      assert.deepEqual(rows.map((r) => [Number(r.video_seconds), Number(r.cost_usd), r.status, r.error_code]), [[0, 0, 'failed', 'VIDEO_FAILED']]);
    });
  });

  test('transient poll failures are retried; the job still completes', async () => {
    const { body } = await create({ model: 'sora', prompt: 'Waves on a beach', seconds: 4 });
    const upstream = await upstreamIdOf(body.id);
    fake.failPolls = 2;
    for (let step = 0; step < 3; step++) fake.advance(upstream);
    await eventually(async () => assert.equal((await job(body.id)).status, 'completed'), 10_000, 20);
    assert.equal(fake.failPolls, 0);
    assert.equal((await job(body.id)).seconds, 4);
  });

  test('a job whose provider is no longer configured, one past video.maxJobMinutes, and one the provider no longer knows fail with a clear error', async () => {
    const db = gw.gateway.services.db;
    const now = Date.now();
    const base = {
      tenantId: 'default', callerKind: 'api_key' as const, apiKeyId: keyId, userId: null, organizationId: null, departmentId: null,
      requestedModel: 'sora', model: 'sora', upstreamModel: 'sora-2', prompt: 'p', status: 'in_progress' as const, progress: 10,
      secondsRequested: 4, nextPollAt: now,
    };
    const gone = newVideoJobId();
    await insertVideoJob(db, gone, { ...base, provider: 'mistral', providerTaskId: 'video_gone', createdAt: now });
    const late = newVideoJobId();
    await insertVideoJob(db, late, { ...base, provider: 'openai', providerTaskId: 'video_late', createdAt: now - 31 * 60_000 });
    const unknown = newVideoJobId();
    await insertVideoJob(db, unknown, { ...base, provider: 'openai', providerTaskId: 'video_unknown', createdAt: now });
    await eventually(async () => {
      for (const id of [gone, late, unknown]) assert.equal((await job(id)).status, 'failed', id);
    }, 5000, 10);
    const lost = await job(unknown);
    assert.notEqual(lost.error.code, 'UPSTREAM_TIMEOUT');
    assert.match(lost.error.message, /Video not found/);
    assert.equal(fake.polls('video_unknown').length, 1, 'a task the provider does not know is not asked about again');
    assert.match((await job(gone)).error.message, /mistral .*no longer configured/);
    assert.equal((await job(late)).error.code, 'UPSTREAM_TIMEOUT');
    assert.equal(fake.polls('video_late').length, 0);
  });

  test('another tenant\'s job is 404, as is an unknown or malformed id; a key without the capability is 403', async () => {
    const { body } = await create({ model: 'sora', prompt: 'Tenant check' });
    assert.equal((await get(`/v1/video/generations/${body.id}`, otherKey)).status, 404);
    assert.equal((await get(`/v1/video/generations/${body.id}/content`, otherKey)).status, 404);
    const unknown = await get('/v1/video/generations/video-00000000-0000-4000-8000-000000000000');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'NOT_FOUND');
    assert.equal((await get('/v1/video/generations/nope')).status, 404);
    const noCapability = await gw.createKey({ scopes: { capabilities: ['tts'] } });
    assert.equal((await create({ model: 'sora', prompt: 'x' }, noCapability)).status, 403);
    assert.equal((await get(`/v1/video/generations/${body.id}`, noCapability)).status, 403);
  });

  test('refusals before any upstream call: values out of range (never clamped), what the provider cannot take', async () => {
    const creates = () => fake.calls.filter((c) => c.method === 'POST').length;
    const before = creates();
    for (const body of [
      { model: 'sora', prompt: '' },
      { model: 'sora', prompt: 'x'.repeat(4001) },
      { model: 'sora', prompt: 'x', seconds: 0 },
      { model: 'sora', prompt: 'x', seconds: 61 },
      { model: 'sora', prompt: 'x', seconds: 4.5 },
      { model: 'sora', prompt: 'x', size: 'big' },
      { model: 'sora', prompt: 'x', aspect_ratio: 'wide' },
      { model: 'sora', prompt: 'x', image: 'http://example.com/frame.png' },
      { model: 'sora', prompt: 'x', seed: -1 },
      { model: 'sora', prompt: 'x', quality: 'hd' },
      { prompt: 'x' },
    ]) {
      const refused = await create(body);
      assert.equal(refused.status, 400, JSON.stringify(body).slice(0, 80));
      assert.equal(refused.body.error.code, 'VALIDATION_ERROR', JSON.stringify(refused.body));
    }
    for (const body of [
      { model: 'sora', prompt: 'x', seconds: 5 },
      { model: 'sora', prompt: 'x', negative_prompt: 'blur' },
      { model: 'sora', prompt: 'x', seed: 7 },
      { model: 'sora', prompt: 'x', image: 'https://example.com/frame.png' },
      { model: 'sora', prompt: 'x', aspect_ratio: '4:3' },
      { model: 'sora', prompt: 'x', aspect_ratio: '16:9', size: '720x1280' },
      { model: 'claude', prompt: 'x' },
    ]) {
      const refused = await create(body);
      assert.equal(refused.status, 400, JSON.stringify(body));
      assert.equal(refused.body.error.code, 'CAPABILITY_NOT_SUPPORTED', JSON.stringify(refused.body));
    }
    assert.equal(creates(), before, 'no refusal reached the provider');
  });
});
