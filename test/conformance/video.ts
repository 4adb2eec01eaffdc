/**
 * The conformance kit for video generation: every video translator runs the same fixtures through a real gateway
 * against a loopback fake speaking the provider's task API (video-wire.ts). A job walks queued -> in_progress ->
 * completed as the kit moves the provider's task, its video reaches the caller (through the gateway's content
 * route when the provider's URL needs the credential, else at the provider's public URL, fetched without it), and
 * it is metered once by its seconds; a task the provider fails; provider errors on create.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ProviderDefinition } from '../../core/dispatch/provider.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startVideoFake, type KitTask, type VideoFake, type VideoWire } from './video-wire.ts';

export type * from './video-wire.ts';

export interface VideoTarget {
  provider: ProviderDefinition;
  /** The value under `providers.<slug>` in pipelines.yaml, pointing at `baseUrl` (the fake's origin). */
  providerBlock(baseUrl: string): string;
  credential: string;
  wire: VideoWire;
  model: string;
  /** A length the provider takes. */
  seconds: number;
  /** true when the provider's video URL needs its credential (the gateway's content route serves it). */
  download: boolean;
  /** false for a provider whose task answers carry no progress (the job then shows only its status); default true. */
  progress?: boolean;
  /** false for a provider whose failed task carries no reason (the job then says none was given); default true. */
  failureReason?: boolean;
}

export const VIDEO = [Buffer.from('\x00\x00\x00\x18ftypmp42', 'latin1'), Buffer.from('-kit-frames-1-'), Buffer.from('-kit-frames-2-')];

export function runVideoConformance(target: VideoTarget): void {
  const { provider, wire } = target;
  describe(`conformance: ${provider.slug} video`, () => {
    let fake: VideoFake;
    let gw: TestGateway;
    let key: string;
    const auth = () => ({ authorization: `Bearer ${key}` });
    const job = async (id: string) => (await (await fetch(`${gw.url}/v1/video/generations/${id}`, { headers: auth() })).json()) as Record<string, any>;
    const lastTask = () => [...fake.tasks.values()].at(-1)!;
    const move = (task: KitTask, status: KitTask['status'], progress: number, reason?: string) => Object.assign(task, { status, progress }, reason ? { reason } : {});

    before(async () => {
      fake = await startVideoFake(wire, VIDEO);
      const block = target.providerBlock(fake.origin).split('\n').map((line) => `    ${line}`).join('\n');
      gw = await startTestGateway(`
routing:
  retries: 0
jobs:
  pollIntervalMs: 10
video:
  pollIntervalMs: 20
providers:
  ${provider.slug}:
${block}
models:
  - { id: kit-video, provider: ${provider.slug}, upstreamModel: ${JSON.stringify(target.model)}, pricing: { videoSecond: 0.05 } }
pipelines:
  - name: kit
    routes: [/v1/video/generations]
    plugins: [auth, { usage: { flushIntervalMs: 10 } }]
`);
      key = await gw.createKey({ scopes: { capabilities: ['video-generation'] } });
    });
    after(async () => {
      await gw?.close();
      await fake?.close();
    });

    test('a job walks queued -> in_progress -> completed; its video reaches the caller; metered once by its seconds', async () => {
      const created = await postJson(`${gw.url}/v1/video/generations`, { model: 'kit-video', prompt: 'A kit fixture', seconds: target.seconds }, auth());
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.equal(created.body.status, 'queued');
      const task = lastTask();
      assert.deepEqual([task.model, task.prompt, task.seconds], [target.model, 'A kit fixture', target.seconds]);
      target.wire.assertAuth(fake.requests.at(-1)!, target.credential);
      const id = created.body.id as string;
      move(task, 'in_progress', 40);
      const progress = target.progress === false ? 0 : 40;
      await eventually(async () => assert.deepEqual([(await job(id)).status, (await job(id)).progress], ['in_progress', progress]), 5000, 10);
      for (const req of fake.requests) target.wire.assertAuth(req, target.credential);
      move(task, 'completed', 100);
      await eventually(async () => assert.equal((await job(id)).status, 'completed'), 5000, 10);
      const done = await job(id);
      assert.equal(done.seconds, target.seconds);
      const contentRoute = `${gw.url}/v1/video/generations/${id}/content`;
      if (target.download) assert.equal(done.url, contentRoute);
      else assert.equal(done.url, `${fake.origin}/kit-files/${task.id}.mp4`);
      const video = await fetch(done.url, { headers: target.download ? auth() : {} });
      assert.equal(video.status, 200);
      assert.deepEqual(Buffer.from(await video.arrayBuffer()), Buffer.concat(VIDEO));
      for (const req of fake.fileRequests) assert.equal(req.headers.authorization, undefined, 'no credential goes to a public URL');
      // The download through the provider's API is checked as the task's requests were (a signature, a token).
      for (const req of fake.requests) target.wire.assertAuth(req, target.credential);
      await eventually(async () => {
        const rows = await gw.gateway.services.db.query<{ video_seconds: number; cost_usd: string; status: string }>(
          'SELECT video_seconds, cost_usd, status FROM usage_records WHERE request_id = $1', [id]);
        assert.deepEqual(rows.map((r) => [Number(r.video_seconds), Number(r.cost_usd), r.status]), [[target.seconds, Math.round(target.seconds * 0.05 * 1e6) / 1e6, 'completed']]);
      });
    });

    test('a task the provider fails: the job fails with its reason, no video', async () => {
      const created = await postJson(`${gw.url}/v1/video/generations`, { model: 'kit-video', prompt: 'A failing fixture' }, auth());
      assert.equal(created.status, 200, JSON.stringify(created.body));
      move(lastTask(), 'failed', 10, 'kit: the task failed');
      await eventually(async () => assert.equal((await job(created.body.id)).status, 'failed'), 5000, 10);
      const failed = await job(created.body.id);
      assert.equal(failed.url, null);
      assert.match(failed.error.message, target.failureReason === false ? /no reason given/ : /kit: the task failed/);
    });

    test('provider errors on create: 400 -> UPSTREAM_BAD_REQUEST, 500 -> UPSTREAM_ERROR; no job', async () => {
      try {
        for (const [status, code] of [[400, 'UPSTREAM_BAD_REQUEST'], [500, 'UPSTREAM_ERROR']] as const) {
          fake.error = status;
          const refused = await postJson(`${gw.url}/v1/video/generations`, { model: 'kit-video', prompt: 'An error fixture' }, auth());
          assert.equal(refused.body.error?.code, code, JSON.stringify(refused.body));
        }
      } finally {
        fake.error = null;
      }
    });
  });
}
