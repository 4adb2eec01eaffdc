/**
 * Registration of batches made on the provider outside the gateway (POST /v1/batches with provider_batch_id),
 * for the providers the gateway polls only: an Azure OpenAI batch and a Gemini batch, each walked to completed by
 * the fake provider, with one signed webhook and one settlement; an unknown provider batch is 404 and recorded
 * nowhere; a provider without a batch API is 400 CAPABILITY_NOT_SUPPORTED before any upstream call.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { MeteredWork } from '../../core/pipeline/metered.ts';
import { TALLY_FILES } from '../fakes/batches.ts';
import { startFakePolledApis, type FakePolledApis } from '../fakes/batches-polled.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { docVerifier, startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';

const config = (origin: string) => `
plugins: [./tally.mjs]
providers:
  azure-openai: { baseUrl: ${origin}/azure/openai, apiKey: azure-key }
  gemini: { baseUrl: ${origin}/gemini/v1beta, apiKey: goog-key }
  cohere: { baseUrl: ${origin}/cohere, apiKey: co-key }
models:
  - id: small
    provider: azure-openai
    upstreamModel: gpt-4o-mini
  - id: flash
    provider: gemini
    upstreamModel: gemini-2.5-flash
    pricing: { input: 0.3, output: 2.5 }
  - id: flash-lite
    provider: gemini
    upstreamModel: gemini-2.5
pipelines:
  - name: batches
    routes: [/v1/batches, /v1/files]
    plugins: [auth]
jobs:
  pollIntervalMs: 10
batches:
  pollIntervalMs: { azure-openai: 40, gemini: 40 }
outbound:
  allowHttp: true
  allowedAddresses: [127.0.0.1]
webhooks:
  backoffMs: 20
`;

describe('/v1/batches registration', () => {
  let fake: FakePolledApis;
  let gw: TestGateway;
  let receiver: Receiver;
  let key: string;
  let metered: MeteredWork[];

  const auth = () => ({ authorization: `Bearer ${key}` });
  const get = async (path: string) => {
    const response = await fetch(`${gw.url}${path}`, { headers: auth() });
    return { status: response.status, body: (await response.json()) as any };
  };
  const register = (body: Record<string, unknown>) => postJson(`${gw.url}/v1/batches`, { endpoint: '/v1/chat/completions', ...body }, auth());
  const statusOf = async (id: string) => (await get(`/v1/batches/${id}`)).body.status as string;
  const hooksFor = (id: string) => receiver.received.filter((r) => JSON.parse(r.body).batch_id === id);
  const allBatches = async () => (await get('/v1/batches?limit=100')).body.data as Array<{ provider_batch_id: string }>;

  before(async () => {
    fake = await startFakePolledApis();
    receiver = await startReceiver(() => 200);
    gw = await startTestGateway(config(fake.origin), { files: TALLY_FILES });
    metered = (gw.gateway.pluginState('tally') as { seen: MeteredWork[] }).seen;
    key = await gw.createKey({ scopes: { capabilities: ['batch', 'files'] } });
  });
  after(async () => {
    await gw?.close();
    await receiver?.close();
    await fake?.close();
  });

  test('azure-openai: a batch made on Azure is registered, walks to completed, one signed webhook, one settlement', async () => {
    fake.failIds.add('z-3');
    const upstream = fake.create('azure', ['z-1', 'z-2', 'z-3']);
    const created = await register({ provider: 'azure-openai', provider_batch_id: upstream.id, completion_webhook_url: receiver.url, metadata: { origin: 'portal' } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const batch = created.body;
    assert.match(batch.id, /^batch-[0-9a-f-]{36}$/);
    assert.deepEqual([batch.provider, batch.provider_batch_id, batch.status, batch.endpoint], ['azure-openai', upstream.id, 'validating', '/v1/chat/completions']);
    assert.deepEqual(batch.request_counts, { total: 3, completed: 0, failed: 0 }, 'the provider\'s counts');
    assert.deepEqual(batch.metadata, { origin: 'portal' });
    assert.match(batch.webhook_secret, /^whsec_/);
    const first = fake.statusPolls(upstream.id)[0]!;
    assert.match(first.path, /\?api-version=\d{4}-\d{2}-\d{2}/);
    assert.equal(first.headers['api-key'], 'azure-key');

    const again = await register({ provider: 'azure-openai', provider_batch_id: upstream.id, completion_webhook_url: receiver.url });
    assert.equal(again.status, 200);
    assert.equal(again.body.id, batch.id, 'the same provider batch answers its existing record');
    assert.equal(again.body.webhook_secret, undefined, 'the secret is shown once');
    assert.deepEqual(again.body.metadata, { origin: 'portal' });
    assert.equal((await allBatches()).filter((b) => b.provider_batch_id === upstream.id).length, 1);

    fake.set(upstream.id, 'in_progress');
    await eventually(async () => assert.equal(await statusOf(batch.id), 'in_progress'), 5000, 10);
    fake.set(upstream.id, 'completed');
    await eventually(async () => assert.equal(hooksFor(batch.id).length, 1), 5000, 10);
    const done = (await get(`/v1/batches/${batch.id}`)).body;
    assert.deepEqual([done.status, done.request_counts], ['completed', { total: 3, completed: 2, failed: 1 }]);
    const output = (await get(`/v1/files/${done.output_file_id}`)).body;
    assert.deepEqual([output.provider, output.purpose, output.bytes], ['azure-openai', 'batch_output', Buffer.byteLength(fake.files.get(upstream.outputFile!)!)]);
    assert.equal((await get(`/v1/files/${done.error_file_id}`)).status, 200);

    const hook = hooksFor(batch.id)[0]!;
    assert.ok((await docVerifier())(batch.webhook_secret, String(hook.headers['x-gateway-signature']), hook.body), 'the signature verifies');
    const payload = JSON.parse(hook.body);
    assert.deepEqual([payload.status, payload.provider, payload.provider_batch_id, payload.output_file_url], ['completed', 'azure-openai', upstream.id, `/v1/files/${upstream.outputFile}/content`]);

    await eventually(async () => assert.ok(metered.some((w) => w.id === batch.id)), 5000, 10);
    const work = metered.find((w) => w.id === batch.id)!;
    assert.deepEqual([work.provider, work.requestedModel, work.model, work.upstreamModel], ['azure-openai', null, 'small', 'gpt-4o-mini-2024-07-18']);
    assert.deepEqual(work.usage, { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 });
    assert.deepEqual([work.requests, work.status], [{ total: 3, completed: 2, failed: 1 }, 'completed']);
    const polls = fake.statusPolls(upstream.id).length;
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(fake.statusPolls(upstream.id).length, polls, 'a terminal batch is polled no more');
    assert.equal(metered.filter((w) => w.id === batch.id).length, 1);
  });

  test('gemini: a Batch Mode batch registered by name, PENDING -> RUNNING -> SUCCEEDED; its responses file becomes a gateway file', async () => {
    fake.failIds.add('g-2');
    const upstream = fake.create('gemini', ['g-1', 'g-2', 'g-3']);
    const created = await register({ provider: 'gemini', provider_batch_id: upstream.id, completion_webhook_url: receiver.url });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const batch = created.body;
    assert.deepEqual([batch.provider_batch_id, batch.status, batch.request_counts], [upstream.id, 'validating', { total: 3, completed: 0, failed: 0 }]);
    assert.equal(fake.statusPolls(upstream.id)[0]!.headers['x-goog-api-key'], 'goog-key');

    fake.set(upstream.id, 'BATCH_STATE_RUNNING');
    await eventually(async () => assert.equal(await statusOf(batch.id), 'in_progress'), 5000, 10);
    fake.set(upstream.id, 'BATCH_STATE_SUCCEEDED');
    await eventually(async () => assert.equal(hooksFor(batch.id).length, 1), 5000, 10);
    const done = (await get(`/v1/batches/${batch.id}`)).body;
    assert.deepEqual([done.status, done.request_counts, done.error_file_id], ['completed', { total: 3, completed: 2, failed: 1 }, null]);
    const output = (await get(`/v1/files/${done.output_file_id}`)).body;
    assert.deepEqual([output.provider, output.bytes, output.filename], ['gemini', Buffer.byteLength(fake.files.get(upstream.outputFile!)!), 'batch-results.jsonl']);
    const hook = hooksFor(batch.id)[0]!;
    assert.ok((await docVerifier())(batch.webhook_secret, String(hook.headers['x-gateway-signature']), hook.body));
    assert.equal(JSON.parse(hook.body).status, 'completed');

    await eventually(async () => assert.ok(metered.some((w) => w.id === batch.id)), 5000, 10);
    const work = metered.find((w) => w.id === batch.id)!;
    assert.deepEqual(work.usage, { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 });
    assert.deepEqual([work.provider, work.upstreamModel, work.status], ['gemini', 'gemini-2.5-flash-001', 'completed']);
    // Priced as the configured model the provider's versioned name extends (the longest upstream name wins).
    assert.deepEqual([work.requestedModel, work.model], [null, 'flash']);
    assert.ok(fake.requests.some((r) => r.path === `/download/gemini/v1beta/${upstream.outputFile}:download?alt=media`), 'results read from the download endpoint');
  });

  test('gemini: a batch whose responses are inlined settles the tokens of its inlined responses', async () => {
    fake.failIds.add('i-2');
    const upstream = fake.create('gemini', ['i-1', 'i-2', 'i-3', 'i-4'], { inline: true });
    const batch = (await register({ provider: 'gemini', provider_batch_id: upstream.id })).body;
    fake.set(upstream.id, 'BATCH_STATE_SUCCEEDED');
    await eventually(async () => assert.ok(metered.some((w) => w.id === batch.id)), 5000, 10);
    const done = (await get(`/v1/batches/${batch.id}`)).body;
    assert.deepEqual([done.status, done.request_counts, done.output_file_id], ['completed', { total: 4, completed: 3, failed: 1 }, null], 'inlined responses are no file');
    const work = metered.find((w) => w.id === batch.id)!;
    assert.deepEqual(work.usage, { prompt_tokens: 30, completion_tokens: 15, total_tokens: 45 });
    assert.deepEqual([work.upstreamModel, work.model], ['gemini-2.5-flash-001', 'flash']);
  });

  test('a batch that had already ended when registered reaches its terminal state at once, webhook and settlement included', async () => {
    const upstream = fake.create('gemini', ['e-1']);
    fake.set(upstream.id, 'BATCH_STATE_SUCCEEDED');
    const batch = (await register({ provider: 'gemini', provider_batch_id: upstream.id, completion_webhook_url: receiver.url })).body;
    assert.equal(batch.status, 'in_progress');
    await eventually(async () => assert.equal(hooksFor(batch.id).length, 1), 5000, 10);
    assert.equal(await statusOf(batch.id), 'completed');
    await eventually(async () => assert.ok(metered.some((w) => w.id === batch.id)), 5000, 10);
  });

  test('an unknown provider batch id: 404 NOT_FOUND, nothing recorded', async () => {
    for (const [provider, id] of [['azure-openai', 'batch_nope'], ['gemini', 'batches/nope']] as const) {
      const missing = await register({ provider, provider_batch_id: id, completion_webhook_url: receiver.url });
      assert.deepEqual([missing.status, missing.body.error.code], [404, 'NOT_FOUND'], JSON.stringify(missing.body));
      assert.ok(!(await allBatches()).some((b) => b.provider_batch_id === id));
    }
  });

  test('a provider without batch polling: 400 CAPABILITY_NOT_SUPPORTED, no upstream call; submit to a polled-only provider too', async () => {
    const before = fake.requests.length;
    const cohere = await register({ provider: 'cohere', provider_batch_id: 'anything' });
    assert.deepEqual([cohere.status, cohere.body.error.code], [400, 'CAPABILITY_NOT_SUPPORTED'], JSON.stringify(cohere.body));
    const submit = await register({ provider: 'azure-openai', requests: [{ custom_id: 's-1', method: 'POST', url: '/v1/chat/completions', body: { model: 'small', messages: [] } }] });
    assert.deepEqual([submit.status, submit.body.error.code], [400, 'CAPABILITY_NOT_SUPPORTED'], JSON.stringify(submit.body));
    const endpoint = await register({ provider: 'gemini', provider_batch_id: 'batches/x', endpoint: '/v1/messages' });
    assert.deepEqual([endpoint.status, endpoint.body.error.code], [400, 'CAPABILITY_NOT_SUPPORTED']);
    assert.equal(fake.requests.length, before);
    const both = await register({ provider: 'gemini', provider_batch_id: 'batches/x', requests: [] });
    assert.deepEqual([both.status, both.body.error.code], [400, 'VALIDATION_ERROR']);
    const neither = await register({ provider: 'gemini' });
    assert.deepEqual([neither.status, neither.body.error.code], [400, 'VALIDATION_ERROR']);
  });
});
