/**
 * A video job's content route through a real gateway: links built on server.publicUrl, a provider's public
 * result URL handed out as it is (the content route redirects there), a download the provider cuts midway cutting
 * the caller's connection, and a job whose provider is no longer configured.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { endVideoJob, insertVideoJob, newVideoJobId } from '../../core/store/video-jobs.ts';
import { startFakeOpenAiVideo, type FakeOpenAiVideo } from '../fakes/openai-video.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const PUBLIC = 'https://gw.example.com/ai';

const config = (origin: string) => `
server:
  publicUrl: ${PUBLIC}/
jobs:
  pollIntervalMs: 10
video:
  pollIntervalMs: 20
providers:
  openai: { baseUrl: ${origin}/v1, apiKey: sk-upstream }
models:
  - id: sora
    provider: openai
    upstreamModel: sora-2
pipelines:
  - name: video
    routes: [/v1/video/generations]
    plugins: [auth]
`;

describe('video content', () => {
  let fake: FakeOpenAiVideo;
  let gw: TestGateway;
  let key: string;
  const auth = () => ({ authorization: `Bearer ${key}` });
  const job = async (id: string) => (await (await fetch(`${gw.url}/v1/video/generations/${id}`, { headers: auth() })).json()) as Record<string, any>;

  /** A job recorded as started on `provider`, then ended as completed at `resultUrl`. */
  async function completedJob(provider: string, resultUrl: string, needsCredential: boolean): Promise<string> {
    const db = gw.gateway.services.db;
    const id = newVideoJobId();
    const now = Date.now();
    await insertVideoJob(db, id, {
      tenantId: 'default', callerKind: 'api_key', apiKeyId: null, userId: null, organizationId: null, departmentId: null,
      requestedModel: 'sora', model: 'sora', provider, upstreamModel: 'sora-2', providerTaskId: `task-${id}`, prompt: 'p',
      status: 'in_progress', progress: 50, secondsRequested: 4, createdAt: now, nextPollAt: now + 3_600_000,
    });
    await endVideoJob(db, id, { status: 'completed', resultUrl, needsCredential, secondsMade: 4, completedAt: now });
    return id;
  }

  before(async () => {
    fake = await startFakeOpenAiVideo();
    gw = await startTestGateway(config(fake.origin));
    key = await gw.createKey({ scopes: { capabilities: ['video-generation'] } });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('the content route link is built on server.publicUrl', async () => {
    const created = await postJson(`${gw.url}/v1/video/generations`, { model: 'sora', prompt: 'A public link', seconds: 4 }, auth());
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const upstream = [...fake.videos.keys()].at(-1)!;
    for (let step = 0; step < 3; step++) fake.advance(upstream);
    await eventually(async () => assert.equal((await job(created.body.id)).status, 'completed'), 5000, 10);
    assert.equal((await job(created.body.id)).url, `${PUBLIC}/v1/video/generations/${created.body.id}/content`);
  });

  test('a provider\'s public URL is handed out as it is; the content route redirects there', async () => {
    const id = await completedJob('openai', 'https://cdn.example.com/v/1.mp4', false);
    assert.equal((await job(id)).url, 'https://cdn.example.com/v/1.mp4');
    const content = await fetch(`${gw.url}/v1/video/generations/${id}/content`, { headers: auth(), redirect: 'manual' });
    assert.equal(content.status, 302);
    assert.equal(content.headers.get('location'), 'https://cdn.example.com/v/1.mp4');
  });

  test('a download the provider cuts midway cuts the caller\'s connection: never a truncated 200 that looks whole', async () => {
    const created = await postJson(`${gw.url}/v1/video/generations`, { model: 'sora', prompt: 'A broken download', seconds: 4 }, auth());
    const upstream = [...fake.videos.keys()].at(-1)!;
    for (let step = 0; step < 3; step++) fake.advance(upstream);
    await eventually(async () => assert.equal((await job(created.body.id)).status, 'completed'), 5000, 10);
    fake.breakContent = true;
    try {
      const response = await fetch(`${gw.url}/v1/video/generations/${created.body.id}/content`, { headers: auth() });
      assert.equal(response.status, 200);
      await assert.rejects(response.arrayBuffer());
    } finally {
      fake.breakContent = false;
    }
  });

  test('a download redirected to another host is followed without the credential; a generic type becomes the video\'s', async () => {
    const seen: Array<string | undefined> = [];
    const host = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.concat(fake.chunks));
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    const created = await postJson(`${gw.url}/v1/video/generations`, { model: 'sora', prompt: 'A redirected download', seconds: 4 }, auth());
    const upstream = [...fake.videos.keys()].at(-1)!;
    for (let step = 0; step < 3; step++) fake.advance(upstream);
    await eventually(async () => assert.equal((await job(created.body.id)).status, 'completed'), 5000, 10);
    fake.redirectContent = `http://127.0.0.1:${(host.address() as AddressInfo).port}/files/video.mp4?sig=abc`;
    try {
      const response = await fetch(`${gw.url}/v1/video/generations/${created.body.id}/content`, { headers: auth() });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'video/mp4');
      assert.ok(Buffer.from(await response.arrayBuffer()).equals(Buffer.concat(fake.chunks)));
      assert.deepEqual(seen, [undefined], 'the file host got no credential');
    } finally {
      delete fake.redirectContent;
      await new Promise<void>((resolve) => host.close(() => resolve()));
    }
  });

  test('a job whose provider is no longer configured: its video cannot be fetched (503)', async () => {
    const id = await completedJob('mistral', '/videos/gone/content', true);
    const content = await fetch(`${gw.url}/v1/video/generations/${id}/content`, { headers: auth() });
    assert.equal(content.status, 503);
    assert.equal(((await content.json()) as { error: { code: string } }).error.code, 'UPSTREAM_UNAVAILABLE');
  });
});
