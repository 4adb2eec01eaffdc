/**
 * /v1/batches end to end against fakes of OpenAI's Batch API and Anthropic's Message Batches API: each batch
 * walks validating -> in_progress -> a terminal state as the fake provider moves it, the completion webhook is
 * received once and its signature verified, and settlement reports the batch's summed usage once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { MeteredWork } from '../../core/pipeline/metered.ts';
import { batchesConfig, TALLY_FILES, startFakeBatchApis, type FakeBatchApis } from '../fakes/batches.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { docVerifier, startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';

const CADENCE = `
batches:
  pollIntervalMs: { openai: 40, anthropic: 40 }
`;

const chatLine = (custom_id: string, extra: Record<string, unknown> = {}) => ({
  custom_id, method: 'POST', url: '/v1/chat/completions', body: { model: 'small', messages: [{ role: 'user', content: custom_id }], ...extra },
});
const messagesLine = (custom_id: string) => ({
  custom_id, method: 'POST', url: '/v1/messages', body: { model: 'claude', max_tokens: 16, messages: [{ role: 'user', content: custom_id }] },
});

describe('/v1/batches', () => {
  let fake: FakeBatchApis;
  let gw: TestGateway;
  let receiver: Receiver;
  let key: string;
  let metered: MeteredWork[];

  const auth = () => ({ authorization: `Bearer ${key}` });
  const get = async (path: string) => {
    const response = await fetch(`${gw.url}${path}`, { headers: auth() });
    return { status: response.status, body: (await response.json()) as any };
  };
  const submit = (body: unknown) => postJson(`${gw.url}/v1/batches`, body, auth());
  const statusOf = async (id: string) => (await get(`/v1/batches/${id}`)).body.status as string;
  const hooksFor = (id: string) => receiver.received.filter((r) => JSON.parse(r.body).batch_id === id);

  before(async () => {
    fake = await startFakeBatchApis();
    receiver = await startReceiver(() => 200);
    gw = await startTestGateway(batchesConfig(fake.origin, CADENCE), { files: TALLY_FILES });
    metered = (gw.gateway.pluginState('tally') as { seen: MeteredWork[] }).seen;
    key = await gw.createKey({ scopes: { capabilities: ['batch', 'files'] } });
  });
  after(async () => {
    await gw?.close();
    await receiver?.close();
    await fake?.close();
  });

  test('openai: the JSONL goes up as a batch file, the batch walks to completed, one signed webhook, one settlement', async () => {
    fake.failIds.add('o-3');
    const created = await submit({
      provider: 'openai', endpoint: '/v1/chat/completions', requests: ['o-1', 'o-2', 'o-3'].map((id) => chatLine(id)),
      completion_webhook_url: receiver.url, metadata: { job: 'nightly' },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const batch = created.body;
    assert.match(batch.id, /^batch-[0-9a-f-]{36}$/);
    assert.equal(batch.object, 'batch');
    assert.equal(batch.status, 'validating');
    assert.deepEqual(batch.request_counts, { total: 3, completed: 0, failed: 0 });
    assert.deepEqual(batch.metadata, { job: 'nightly' });
    assert.equal(batch.output_file_id, null);
    assert.match(batch.webhook_secret, /^whsec_/);
    const upstream = fake.batches.get(batch.provider_batch_id)!;
    assert.equal(upstream.endpoint, '/v1/chat/completions');
    assert.equal(fake.files.get(upstream.inputFileId!)!.purpose, 'batch');
    assert.deepEqual(upstream.lines.map((l) => [l.custom_id, l.body.model]), [['o-1', 'gpt-4o-mini'], ['o-2', 'gpt-4o-mini'], ['o-3', 'gpt-4o-mini']]);
    const create = fake.requests.find((r) => r.path === '/openai/batches')!;
    assert.equal(create.headers.authorization, 'Bearer sk-upstream-openai');
    assert.deepEqual(JSON.parse(create.body), { input_file_id: upstream.inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h' });
    assert.equal((await get(`/v1/batches/${batch.id}`)).body.webhook_secret, undefined, 'the secret is shown once');

    await eventually(async () => assert.ok(fake.statusPolls(upstream.id).length >= 2), 5000, 10);
    assert.equal(await statusOf(batch.id), 'validating');
    fake.set(upstream.id, 'in_progress');
    await eventually(async () => assert.equal(await statusOf(batch.id), 'in_progress'), 5000, 10);
    fake.set(upstream.id, 'finalizing');
    await eventually(async () => assert.ok(fake.statusPolls(upstream.id).some((r) => r.at > Date.now() - 30)), 5000, 10);
    assert.equal(await statusOf(batch.id), 'in_progress', 'finalizing is still running');
    fake.set(upstream.id, 'completed');
    await eventually(async () => assert.equal(hooksFor(batch.id).length, 1), 5000, 10);

    const done = (await get(`/v1/batches/${batch.id}`)).body;
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.request_counts, { total: 3, completed: 2, failed: 1 });
    assert.ok(done.completed_at >= done.created_at);
    const output = (await get(`/v1/files/${done.output_file_id}`)).body;
    assert.equal(output.provider, 'openai');
    assert.equal(output.bytes, Buffer.byteLength(fake.files.get(upstream.outputFileId!)!.content));
    assert.equal((await get(`/v1/files/${done.error_file_id}`)).status, 200);

    const hook = hooksFor(batch.id)[0]!;
    const verify = await docVerifier();
    assert.ok(verify(batch.webhook_secret, String(hook.headers['x-gateway-signature']), hook.body), 'the signature verifies');
    assert.equal(hook.headers['x-gateway-delivery'], `${batch.id}.1`);
    const payload = JSON.parse(hook.body);
    assert.deepEqual({ ...payload, completed_at: undefined }, {
      type: 'batch.completed', batch_id: batch.id, provider: 'openai', endpoint: '/v1/chat/completions', status: 'completed',
      request_counts: { total: 3, completed: 2, failed: 1 }, provider_batch_id: upstream.id,
      output_file_url: `/v1/files/${upstream.outputFileId}/content`, error_file_url: `/v1/files/${upstream.errorFileId}/content`,
      completed_at: undefined, metadata: { job: 'nightly' },
    });

    await eventually(async () => assert.ok(metered.some((w) => w.id === batch.id)), 5000, 10);
    const work = metered.find((w) => w.id === batch.id)!;
    assert.equal(work.source, 'batch');
    assert.equal(work.modality, 'chat');
    assert.equal(work.callerKind, 'api_key');
    assert.ok(work.apiKeyId);
    assert.deepEqual([work.provider, work.requestedModel, work.model, work.upstreamModel], ['openai', 'small', 'small', 'gpt-4o-mini-2024-07-18']);
    assert.deepEqual(work.usage, { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 });
    assert.deepEqual([work.requests, work.status], [{ total: 3, completed: 2, failed: 1 }, 'completed']);
    const polls = fake.statusPolls(upstream.id).length;
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(fake.statusPolls(upstream.id).length, polls, 'a terminal batch is polled no more');
    assert.equal(hooksFor(batch.id).length, 1);
    assert.equal(metered.filter((w) => w.id === batch.id).length, 1);
  });

  test('anthropic: a Message Batch walks in_progress -> ended (completed); results read from its results endpoint, no output file', async () => {
    fake.failIds.add('a-2');
    const created = await submit({ provider: 'anthropic', endpoint: '/v1/messages', requests: ['a-1', 'a-2', 'a-3'].map(messagesLine), completion_webhook_url: receiver.url });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const batch = created.body;
    assert.equal(batch.status, 'validating');
    assert.match(batch.provider_batch_id, /^msgbatch_/);
    const sent = fake.requests.find((r) => r.path === '/anthropic/messages/batches')!;
    assert.equal(sent.headers['x-api-key'], 'sk-ant-upstream');
    assert.ok(sent.headers['anthropic-version']);
    assert.deepEqual(JSON.parse(sent.body).requests[0], { custom_id: 'a-1', params: { model: 'claude-haiku', max_tokens: 16, messages: [{ role: 'user', content: 'a-1' }] } });

    await eventually(async () => assert.equal(await statusOf(batch.id), 'in_progress'), 5000, 10);
    fake.set(batch.provider_batch_id, 'ended');
    await eventually(async () => assert.equal(hooksFor(batch.id).length, 1), 5000, 10);
    const done = (await get(`/v1/batches/${batch.id}`)).body;
    assert.deepEqual([done.status, done.output_file_id, done.error_file_id], ['completed', null, null]);
    assert.deepEqual(done.request_counts, { total: 3, completed: 2, failed: 1 });
    const hook = hooksFor(batch.id)[0]!;
    assert.ok((await docVerifier())(batch.webhook_secret, String(hook.headers['x-gateway-signature']), hook.body));
    assert.deepEqual([JSON.parse(hook.body).output_file_url, JSON.parse(hook.body).status], [null, 'completed']);

    await eventually(async () => assert.ok(metered.some((w) => w.id === batch.id)), 5000, 10);
    const work = metered.find((w) => w.id === batch.id)!;
    assert.deepEqual(work.usage, { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 });
    assert.deepEqual([work.endpoint, work.upstreamModel, work.status], ['/v1/messages', 'claude-haiku-20250101', 'completed']);
  });

  test('a failed batch: status failed, the webhook says so, settled with no usage', async () => {
    const batch = (await submit({ provider: 'openai', endpoint: '/v1/embeddings', requests: [{ custom_id: 'e-1', method: 'POST', url: '/v1/embeddings', body: { model: 'small', input: 'x' } }], completion_webhook_url: receiver.url })).body;
    fake.set(batch.provider_batch_id, 'failed');
    await eventually(async () => assert.equal(hooksFor(batch.id).length, 1), 5000, 10);
    assert.equal(await statusOf(batch.id), 'failed');
    assert.equal(JSON.parse(hooksFor(batch.id)[0]!.body).status, 'failed');
    await eventually(async () => assert.ok(metered.some((w) => w.id === batch.id)), 5000, 10);
    const work = metered.find((w) => w.id === batch.id)!;
    assert.deepEqual([work.status, work.modality, work.usage.total_tokens], ['failed', 'embeddings', 0]);
  });

  test('cancel: requested at the provider at once, cancel_requested_at set, polling moves the status; a terminal batch answers as it is', async () => {
    for (const [provider, line, upstreamCancelled] of [['openai', chatLine('c-1'), 'cancelled'], ['anthropic', messagesLine('c-2'), 'ended']] as const) {
      const batch = (await submit({ provider, endpoint: line.url, requests: [line], completion_webhook_url: receiver.url })).body;
      const cancelled = await postJson(`${gw.url}/v1/batches/${batch.id}/cancel`, {}, auth());
      assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
      assert.ok(['validating', 'in_progress'].includes(cancelled.body.status), 'the status is polling\'s to move');
      assert.equal(typeof cancelled.body.cancel_requested_at, 'number');
      assert.equal(fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith(`${batch.provider_batch_id}/cancel`)).length, 1);
      fake.set(batch.provider_batch_id, upstreamCancelled);
      await eventually(async () => assert.equal(hooksFor(batch.id).length, 1), 5000, 10);
      assert.equal(await statusOf(batch.id), 'cancelled');
      assert.equal(JSON.parse(hooksFor(batch.id)[0]!.body).status, 'cancelled');
      const again = await postJson(`${gw.url}/v1/batches/${batch.id}/cancel`, {}, auth());
      assert.deepEqual([again.status, again.body.status, again.body.cancel_requested_at], [200, 'cancelled', cancelled.body.cancel_requested_at]);
      assert.equal(fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith(`${batch.provider_batch_id}/cancel`)).length, 1, 'no second provider cancel');
    }
  });

  test('a webhook receiver that answers 500 three times, then 200: four deliveries, numbered .1 to .4, each signed afresh', async () => {
    const flaky = await startReceiver((n) => (n < 3 ? 500 : 200));
    try {
      const batch = (await submit({ provider: 'openai', endpoint: '/v1/chat/completions', requests: [chatLine('r-1')], completion_webhook_url: flaky.url })).body;
      fake.set(batch.provider_batch_id, 'completed');
      await eventually(async () => assert.equal(flaky.received.length, 4), 10_000, 10);
      const verify = await docVerifier();
      assert.deepEqual(flaky.received.map((r) => r.headers['x-gateway-delivery']), [1, 2, 3, 4].map((n) => `${batch.id}.${n}`));
      for (const delivery of flaky.received) {
        assert.ok(verify(batch.webhook_secret, String(delivery.headers['x-gateway-signature']), delivery.body), 'every attempt verifies');
        assert.equal(JSON.parse(delivery.body).batch_id, batch.id);
      }
      assert.ok(new Set(flaky.received.map((r) => r.body)).size === 1, 'the same payload each time');
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(flaky.received.length, 4, 'a 2xx ends the deliveries');
    } finally {
      await flaky.close();
    }
  });

  test('list: the tenant\'s batches, oldest first, with a cursor; an unknown id is 404', async () => {
    const first = (await get('/v1/batches?limit=1')).body;
    assert.deepEqual([first.object, first.data.length, first.has_more], ['list', 1, true]);
    const rest = (await get(`/v1/batches?limit=100&cursor=${first.next_cursor}`)).body;
    assert.ok(rest.data.length >= 1);
    assert.ok(!rest.data.some((b: { id: string }) => b.id === first.data[0].id));
    const missing = await get('/v1/batches/batch-00000000-0000-0000-0000-000000000000');
    assert.deepEqual([missing.status, missing.body.error.code], [404, 'NOT_FOUND']);
    const notAnId = await get('/v1/batches/batch-%00x');
    assert.deepEqual([notAnId.status, notAnId.body.error.code], [404, 'NOT_FOUND'], 'a NUL never reaches the database');
  });
});
