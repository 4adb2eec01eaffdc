/**
 * The Runway translators against the loopback fake: an image task created with the version header and the
 * bearer key, followed through PENDING -> RUNNING 0.3 -> RUNNING 0.7 -> SUCCEEDED with its progress read as
 * percentages; sizes sent as resolutions or refused; a SAFETY failure and Runway's error bodies mapped; and the
 * video translator's create (image or text to video, per model), created, poll and state on the fake's bodies.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ImageRequest } from '../../core/canonical/image.ts';
import type { VideoRequest } from '../../core/canonical/video.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import runway from '../../providers/runway/index.ts';
import { MP4_BYTES, RUNWAY_KEY, RUNWAY_VERSION, startFakeRunway, type FakeRunway } from '../fakes/runway.ts';
import { sendUpstream } from './wire.ts';

const image = (fields: Partial<ImageRequest> = {}): ImageRequest => ({ model: 'm', prompt: 'a red circle', n: 1, response_format: 'url', ...fields });
const video = (fields: Partial<VideoRequest> = {}): VideoRequest => ({ model: 'v', prompt: 'waves at dusk', ...fields });

describe('runway translators', () => {
  let fake: FakeRunway;
  const target = (upstreamModel: string, apiKey = RUNWAY_KEY): ProviderTarget =>
    ({ slug: 'runway', baseUrl: fake.baseUrl, apiKey, headers: {}, options: { pollIntervalMs: 1 }, upstreamModel });
  const images = runway.image!;
  const videos = runway.video!;

  /** The exchange's loop: send, map an error, follow up until null; returns the final body and the progress read. */
  async function runImage(req: ImageRequest, t: ProviderTarget) {
    let answer = await sendUpstream(t.baseUrl, images.toUpstream(req, t));
    const progress: Array<number | undefined> = [];
    for (let step = 0; ; step++) {
      if (answer.status >= 400) throw runway.mapError(answer.status, answer.body, t);
      const next = images.followUp!(answer.body, t, step, req);
      progress.push(images.progress!(answer.body));
      if (!next) return { result: images.fromUpstream(answer.body, t, req), progress };
      assert.equal(next.delayMs, 1, 'the pollIntervalMs option');
      answer = await sendUpstream(t.baseUrl, next.request);
    }
  }

  before(async () => { fake = await startFakeRunway(); });
  after(async () => { await fake?.close(); });

  test('declares images (one per task) and video', () => {
    assert.equal(runway.capabilities.image?.maxImages, 1);
    assert.ok(runway.capabilities.video);
  });

  test('image: POST /text_to_image with model, promptText and ratio, then the task read until SUCCEEDED; progress while RUNNING', async () => {
    const before = fake.requests.length;
    const { result, progress } = await runImage(image({ size: '1920x1080' }), target('gen4_image'));
    const [create, ...reads] = fake.requests.slice(before);
    assert.deepEqual([create!.method, create!.path], ['POST', '/v1/text_to_image']);
    assert.deepEqual(create!.json, { model: 'gen4_image', promptText: 'a red circle', ratio: '1920:1080' });
    assert.equal(create!.headers['content-type'], 'application/json');
    assert.equal(reads.length, 4);
    const id = reads[0]!.path.split('/').at(-1)!;
    assert.ok(reads.every((r) => r.method === 'GET' && r.path === `/v1/tasks/${id}` && r.json === undefined));
    for (const r of [create!, ...reads]) {
      assert.equal(r.headers.authorization, `Bearer ${RUNWAY_KEY}`);
      assert.equal(r.headers['x-runway-version'], RUNWAY_VERSION);
    }
    assert.deepEqual(fake.polls.filter((p) => p.id === id).map((p) => [p.status, p.progress]), [['PENDING', undefined], ['RUNNING', 0.3], ['RUNNING', 0.7], ['SUCCEEDED', undefined]]);
    assert.deepEqual(progress, [undefined, undefined, 30, 70, undefined], 'the create answer, then each read: a percentage only while RUNNING');
    assert.deepEqual(result, { images: [{ url: `${fake.origin}/outputs/${id}.png` }] });
    const png = await fetch(result.images[0]!.url!);
    assert.equal(png.headers.get('content-type'), 'image/png', 'the output URL is public');
  });

  test('image: the default size is 1024x1024; sizes gen4_image does not make and gen4_image_turbo are refused before any I/O', () => {
    const body = JSON.parse(images.toUpstream(image(), target('gen4_image')).body!) as Record<string, unknown>;
    assert.equal(body.ratio, '1024:1024');
    assert.throws(() => images.toUpstream(image({ size: '1792x1024' }), target('gen4_image')), (e: GatewayError) => e.code === 'CAPABILITY_NOT_SUPPORTED' && /not one gen4_image makes \(1920x1080, 1080x1920/.test(e.message));
    assert.throws(() => images.toUpstream(image({ size: 'big' }), target('gen4_image')), (e: GatewayError) => e.code === 'VALIDATION_ERROR');
    for (const asked of [{ quality: 'hd' }, { style: 'vivid' }]) {
      assert.throws(() => images.toUpstream(image(asked), target('gen4_image')), (e: GatewayError) => e.code === 'CAPABILITY_NOT_SUPPORTED' && /does not support the image parameter (quality|style)/.test(e.message));
    }
    assert.throws(() => images.toUpstream(image(), target('gen4_image_turbo')), (e: GatewayError) => e.code === 'CAPABILITY_NOT_SUPPORTED' && /reference images/.test(e.message));
  });

  test('image: a task FAILED on SAFETY is a refusal of the prompt; CANCELLED and other failures are Runway\'s errors', async () => {
    await assert.rejects(runImage(image({ prompt: 'something unsafe' }), target('gen4_image')), (e: GatewayError) => {
      assert.equal(e.code, 'UPSTREAM_BAD_REQUEST');
      assert.match(e.message, /refused by Runway's content moderation \(SAFETY\.INPUT\.TEXT: The prompt was flagged/);
      return true;
    });
    const t = target('gen4_image');
    assert.throws(() => images.followUp!({ id: 't', status: 'CANCELLED' }, t, 3, image()), (e: GatewayError) => e.code === 'UPSTREAM_ERROR' && /was cancelled \(the task was cancelled\)/.test(e.message));
    assert.throws(() => images.followUp!({ id: 't', status: 'FAILED', failure: 'An internal error occurred', failureCode: 'INTERNAL' }, t, 3, image()), (e: GatewayError) => e.code === 'UPSTREAM_ERROR' && /failed \(INTERNAL: An internal error/.test(e.message));
    assert.throws(() => images.followUp!({ id: 't', status: 'DONE' }, t, 3, image()), (e: GatewayError) => e.code === 'UPSTREAM_ERROR');
    assert.throws(() => images.followUp!({}, t, 0, image()), (e: GatewayError) => e.code === 'UPSTREAM_ERROR' && /without an id/.test(e.message));
  });

  test('errors: Runway\'s {error, issues} bodies by status; a wrong key is the gateway\'s credential refused', async () => {
    await assert.rejects(runImage(image(), target('gen4_image', 'wrong')), (e: GatewayError) => e.code === 'UPSTREAM_ERROR' && /refused the gateway's credential: Invalid API key/.test(e.message));
    await assert.rejects(runImage(image(), target('gen3a_turbo')), (e: GatewayError) => {
      assert.equal(e.code, 'UPSTREAM_BAD_REQUEST');
      assert.match(e.message, /Validation of body failed/);
      assert.deepEqual((e.details as { upstreamError: { issues: string[] } }).upstreamError.issues, ['model: Invalid enum value. Expected \'gen4_image\'']);
      return true;
    });
    assert.equal(runway.mapError(429, { error: 'You have exceeded your rate limit' }, target('gen4_image')).code, 'UPSTREAM_RATE_LIMITED');
    assert.equal(runway.mapError(502, 'Bad gateway', target('gen4_image')).code, 'UPSTREAM_ERROR');
  });

  test('video: gen4_turbo from a first frame to /image_to_video (ratio, duration 5 by default, seed); created, polled and read with its length', async () => {
    const t = target('gen4_turbo');
    const asked = video({ image: 'https://example.com/first.png', aspect_ratio: '16:9', seed: 7 });
    const create = videos.create(asked, t);
    assert.equal(create.path, '/image_to_video');
    assert.deepEqual(JSON.parse(create.body!), { model: 'gen4_turbo', promptImage: 'https://example.com/first.png', promptText: 'waves at dusk', ratio: '1280:720', duration: 5, seed: 7 });
    const answer = await sendUpstream(t.baseUrl, create);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const { taskId, state } = videos.created(answer.body, t, asked);
    assert.deepEqual(state, { status: 'queued', progress: 0 });
    const [id, seconds] = taskId.split('#');
    assert.equal(seconds, '5', 'the length sent travels with the task id: Runway\'s answers do not say it');
    assert.ok(fake.tasks.has(id!));
    const states = [];
    for (let i = 0; i < 4; i++) {
      const read = videos.poll(taskId, t);
      assert.deepEqual([read.method, read.path, read.headers['x-runway-version']], ['GET', `/tasks/${id}`, RUNWAY_VERSION]);
      states.push(videos.state((await sendUpstream(t.baseUrl, read)).body, t, taskId));
    }
    const url = `${fake.origin}/outputs/${id}.mp4`;
    assert.deepEqual(states, [
      { status: 'queued', progress: 0 }, { status: 'in_progress', progress: 30 }, { status: 'in_progress', progress: 70 },
      { status: 'completed', progress: 100, result: { url, contentType: 'video/mp4' }, seconds: 5 },
    ]);
    assert.deepEqual(Buffer.from(await (await fetch(url)).arrayBuffer()), MP4_BYTES, 'public: fetched without a credential');
    assert.equal(videos.download, undefined);
  });

  test('video: gen4_turbo without an image is refused; text-capable models go to /text_to_video; sizes, ratios and lengths per model', () => {
    assert.throws(() => videos.create(video(), target('gen4_turbo')), (e: GatewayError) => e.code === 'CAPABILITY_NOT_SUPPORTED' && /gen4_turbo makes video from an image/.test(e.message));
    const text = videos.create(video({ size: '720x1280', seconds: 8 }), target('veo3.1'));
    assert.equal(text.path, '/text_to_video');
    assert.deepEqual(JSON.parse(text.body!), { model: 'veo3.1', promptText: 'waves at dusk', ratio: '720:1280', duration: 8 });
    assert.deepEqual(JSON.parse(videos.create(video({ image: 'data:image/png;base64,AAAA', aspect_ratio: '16:9', seconds: 10 }), target('gen3a_turbo')).body!).ratio, '1280:768', '5:3 is gen3a_turbo\'s nearest to 16:9');
    assert.equal(JSON.parse(videos.create(video(), target('gen4.5')).body!).duration, 2, 'the shortest length, asked for explicitly');
    assert.throws(() => videos.create(video({ image: 'https://x/y.png', seconds: 7 }), target('gen4_turbo')), (e: GatewayError) => e.code === 'CAPABILITY_NOT_SUPPORTED' && /5, 10 seconds, not 7/.test(e.message));
    assert.throws(() => videos.create(video({ image: 'https://x/y.png', size: '1920x1080' }), target('gen4_turbo')), (e: GatewayError) => e.code === 'CAPABILITY_NOT_SUPPORTED' && /size 1920x1080 is not one gen4_turbo makes/.test(e.message));
    assert.throws(() => videos.create(video({ image: 'https://x/y.png', aspect_ratio: '1:1' }), target('gen3a_turbo')), (e: GatewayError) => e.code === 'CAPABILITY_NOT_SUPPORTED' && /no video near 1:1/.test(e.message));
    assert.throws(() => videos.create(video({ negative_prompt: 'rain' }), target('veo3')), (e: GatewayError) => e.code === 'CAPABILITY_NOT_SUPPORTED');
    assert.throws(() => videos.create(video({ seed: 1 }), target('veo3')), (e: GatewayError) => e.code === 'CAPABILITY_NOT_SUPPORTED');
    const other = videos.create(video({ size: '1280x720', seconds: 6 }), target('gen5_future'));
    assert.deepEqual([other.path, JSON.parse(other.body!)], ['/text_to_video', { model: 'gen5_future', promptText: 'waves at dusk', ratio: '1280:720', duration: 6 }], 'a model not in the table: as asked, for Runway to judge');
  });

  test('video: failed and cancelled tasks are failed jobs with Runway\'s reason; THROTTLED is queued', () => {
    const t = target('gen4_turbo');
    assert.deepEqual(videos.state({ id: 'a', status: 'THROTTLED' }, t, 'a'), { status: 'queued', progress: 0 });
    assert.deepEqual(videos.state({ id: 'a', status: 'FAILED', failure: 'Input image was flagged', failureCode: 'SAFETY.INPUT.IMAGE' }, t, 'a'), { status: 'failed', error: 'SAFETY.INPUT.IMAGE: Input image was flagged' });
    assert.deepEqual(videos.state({ id: 'a', status: 'CANCELLED' }, t, 'a'), { status: 'failed', error: 'the task was cancelled' });
    assert.equal(videos.state({ id: 'a', status: 'SUCCEEDED', output: [] }, t, 'a').status, 'failed');
    assert.throws(() => videos.state({ status: 'RUNNING' }, t, 'a'), (e: GatewayError) => e.code === 'UPSTREAM_ERROR');
  });
});
