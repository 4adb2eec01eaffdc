/**
 * A video job survives a gateway restart: it is started on one gateway process, followed to in_progress, the
 * process is stopped, the provider finishes the video meanwhile, and the next start on the same data folder
 * picks the job up from the database, sees it complete, serves its video and meters it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startFakeOpenAiVideo, type FakeOpenAiVideo } from '../fakes/openai-video.ts';
import { eventually } from '../helpers/eventually.ts';
import { ADMIN_TOKEN, postJson } from '../helpers/gateway.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';

let fake: FakeOpenAiVideo;
let dir: string;
const running: GatewayProcess[] = [];

const config = (origin: string) => `
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
    pricing: { videoSecond: 0.1 }
pipelines:
  - name: video
    routes: [/v1/video/generations, /v1/usage]
    plugins: [auth, { usage: { flushIntervalMs: 10 } }]
`;

before(async () => {
  fake = await startFakeOpenAiVideo();
  dir = await mkdtemp(join(tmpdir(), 'aigw-video-restart-'));
  await writeFile(join(dir, 'pipelines.yaml'), config(fake.origin));
});

after(async () => {
  for (const gateway of running) if (gateway.child.exitCode === null && gateway.child.signalCode === null) gateway.child.kill('SIGKILL');
  await Promise.all(running.map((g) => g.exited));
  await fake?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const start = async () => {
  const gateway = await startGatewayProcess(join(dir, 'pipelines.yaml'), { AIGW_DATA_DIR: join(dir, 'data'), AIGW_ADMIN_TOKEN: ADMIN_TOKEN }, 60_000);
  running.push(gateway);
  return gateway;
};

test('a video job walks queued -> in_progress -> completed against a fake, surviving a gateway restart', { timeout: 180_000 }, async () => {
  const first = await start();
  const created = await postJson(`${first.url}/admin/v1/keys`, { name: 'video', scopes: { capabilities: ['video-generation', 'usage:read'] } }, { authorization: `Bearer ${ADMIN_TOKEN}` });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const auth = { authorization: `Bearer ${created.body.key as string}` };
  const job = async (url: string, id: string) => (await (await fetch(`${url}/v1/video/generations/${id}`, { headers: auth })).json()) as Record<string, any>;

  const started = await postJson(`${first.url}/v1/video/generations`, { model: 'sora', prompt: 'A lighthouse at dusk', seconds: 12 }, auth);
  assert.equal(started.status, 200, JSON.stringify(started.body));
  assert.equal(started.body.status, 'queued');
  const id = started.body.id as string;
  const upstream = [...fake.videos.keys()].at(-1)!;
  fake.advance(upstream);
  await eventually(async () => assert.deepEqual([(await job(first.url, id)).status, (await job(first.url, id)).progress], ['in_progress', 33]), 30_000, 20);

  first.child.kill('SIGTERM');
  assert.equal(await first.exited, 0);
  // The provider goes on without the gateway.
  fake.advance(upstream);
  fake.advance(upstream);
  const pollsWhileStopped = fake.polls(upstream).length;

  const second = await start();
  await eventually(async () => assert.equal((await job(second.url, id)).status, 'completed'), 60_000, 20);
  assert.ok(fake.polls(upstream).length > pollsWhileStopped, 'the restarted gateway polled the job');
  const done = await job(second.url, id);
  assert.deepEqual([done.progress, done.seconds, done.url], [100, 12, `${second.url}/v1/video/generations/${id}/content`]);
  const video = await fetch(done.url, { headers: auth });
  assert.equal(video.status, 200);
  assert.deepEqual(Buffer.from(await video.arrayBuffer()), Buffer.concat(fake.chunks));

  const from = encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString());
  await eventually(async () => {
    const usage = await (await fetch(`${second.url}/v1/usage?from=${from}&group_by=modality`, { headers: auth })).json() as { data: Array<{ modality: string; video_seconds: number; cost_usd: number }> };
    const row = usage.data.find((r) => r.modality === 'video');
    assert.deepEqual([row?.video_seconds, row?.cost_usd], [12, 1.2], JSON.stringify(usage));
  }, 30_000, 50);
});
