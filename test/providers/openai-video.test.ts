/**
 * OpenAI's video translator against the bodies OpenAI's video generation guide shows: the create request, the
 * video object in each status, the content download, and what the API cannot take refused before any call.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { openaiVideo } from '../../providers/openai/video.ts';

const target: ProviderTarget = {
  slug: 'openai', baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-test', headers: {}, options: { organization: 'org-1' }, upstreamModel: 'sora-2-pro',
};
const ID = 'video_68d7512d07848190b3e45da0ecbebcde004da08e1e0678d5';
const recorded = (status: string, progress: number, extra: Record<string, unknown> = {}) => ({
  id: ID, object: 'video', created_at: 1758941485, status, model: 'sora-2-pro', progress, seconds: '8', size: '1280x720', ...extra,
});
const refusal = (parameter: string) => (err: unknown) => err instanceof GatewayError && err.code === 'CAPABILITY_NOT_SUPPORTED' && (err.details as { parameter?: string }).parameter === parameter;

describe('openai video translator', () => {
  test('create: POST /videos with the upstream model, seconds as a string and the size; the key and organization', () => {
    const request = openaiVideo.create({ model: 'sora', prompt: 'A cat', seconds: 8, size: '1280x720' }, target);
    assert.equal(request.method, 'POST');
    assert.equal(request.path, '/videos');
    assert.equal(request.headers.authorization, 'Bearer sk-test');
    assert.equal(request.headers['openai-organization'], 'org-1');
    assert.equal(request.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(request.body!), { model: 'sora-2-pro', prompt: 'A cat', seconds: '8', size: '1280x720' });
    assert.deepEqual(JSON.parse(openaiVideo.create({ model: 'sora', prompt: 'A cat', aspect_ratio: '9:16' }, target).body!), { model: 'sora-2-pro', prompt: 'A cat', size: '720x1280' });
    assert.deepEqual(JSON.parse(openaiVideo.create({ model: 'sora', prompt: 'A cat', aspect_ratio: '16:9', size: '1920x1080' }, target).body!).size, '1920x1080');
  });

  test('what the API cannot take is refused, never dropped or rounded', () => {
    assert.throws(() => openaiVideo.create({ model: 'sora', prompt: 'x', seconds: 10 }, target), refusal('seconds'));
    assert.throws(() => openaiVideo.create({ model: 'sora', prompt: 'x', image: 'data:image/png;base64,AAAA' }, target), refusal('image'));
    assert.throws(() => openaiVideo.create({ model: 'sora', prompt: 'x', negative_prompt: 'blur' }, target), refusal('negative_prompt'));
    assert.throws(() => openaiVideo.create({ model: 'sora', prompt: 'x', seed: 1 }, target), refusal('seed'));
    assert.throws(() => openaiVideo.create({ model: 'sora', prompt: 'x', aspect_ratio: '1:1' }, target), refusal('aspect_ratio'));
    assert.throws(() => openaiVideo.create({ model: 'sora', prompt: 'x', aspect_ratio: '16:9', size: '720x1280' }, target), refusal('aspect_ratio'));
  });

  test('created, poll and state: the task id, queued -> in_progress (progress) -> completed, whose MP4 needs the key', () => {
    assert.deepEqual(openaiVideo.created(recorded('queued', 0), target, { model: 'sora', prompt: 'x' }), { taskId: ID, state: { status: 'queued', progress: 0 } });
    const poll = openaiVideo.poll(ID, target);
    assert.deepEqual([poll.method, poll.path, poll.headers.authorization, poll.headers['content-type'], poll.body], ['GET', `/videos/${ID}`, 'Bearer sk-test', undefined, undefined]);
    assert.deepEqual(openaiVideo.state(recorded('in_progress', 33), target, ID), { status: 'in_progress', progress: 33 });
    const done = openaiVideo.state(recorded('completed', 100), target, ID);
    assert.deepEqual(done, { status: 'completed', progress: 100, seconds: 8, result: { url: `/videos/${ID}/content`, needsCredential: true, contentType: 'video/mp4' } });
    const download = openaiVideo.download!(ID, done.result!.url, target);
    assert.deepEqual([download.method, download.path, download.headers.authorization], ['GET', `/videos/${ID}/content`, 'Bearer sk-test']);
  });

  test('failed: the provider\'s reason; an unknown status or a video without id is the provider\'s error', () => {
    const failed = openaiVideo.state(recorded('failed', 20, { error: { code: 'moderation_blocked', message: 'Blocked by moderation.' } }), target, ID);
    assert.deepEqual(failed, { status: 'failed', progress: 20, error: 'Blocked by moderation.' });
    assert.throws(() => openaiVideo.state(recorded('cancelled', 0), target, ID), (err: unknown) => err instanceof GatewayError && err.code === 'UPSTREAM_ERROR');
    assert.throws(() => openaiVideo.created({ status: 'queued' }, target, { model: 'sora', prompt: 'x' }), (err: unknown) => err instanceof GatewayError && err.code === 'UPSTREAM_ERROR');
  });
});
