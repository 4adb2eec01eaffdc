/**
 * Vertex AI batch prediction jobs registered through POST /v1/batches (provider_batch_id) and polled by a real
 * gateway against the fake Vertex + Cloud Storage: a Gemini job walks PENDING -> RUNNING -> SUCCEEDED, its
 * predictions file (found by listing the output directory, page by page) becomes the output file and is settled
 * once; several result files, an embeddings job, a BigQuery job, a cancelled job; a partner model's job and an
 * unknown one are refused. Every request the fake sees carries the OAuth token.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { MeteredWork } from '../../core/pipeline/metered.ts';
import { resolveFile } from '../../core/store/files.ts';
import { TALLY_FILES } from '../fakes/batches.ts';
import { GEMINI_MODEL, startFakeVertex, VERTEX_BASE_PATH, type FakeVertex } from '../fakes/vertex.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

describe('/v1/batches with vertex-ai batch prediction jobs', () => {
  let fake: FakeVertex;
  let gw: TestGateway;
  let key: string;
  let metered: MeteredWork[];

  const auth = () => ({ authorization: `Bearer ${key}` });
  const get = async (path: string) => {
    const response = await fetch(`${gw.url}${path}`, { headers: auth() });
    return { status: response.status, body: (await response.json()) as any };
  };
  const register = (body: Record<string, unknown>) => postJson(`${gw.url}/v1/batches`, { provider: 'vertex-ai', endpoint: '/v1/chat/completions', ...body }, auth());
  const statusOf = async (id: string) => (await get(`/v1/batches/${id}`)).body.status as string;
  const workOf = async (id: string) => {
    await eventually(async () => assert.ok(metered.some((w) => w.id === id), `batch ${id} settled`), 10_000, 10);
    return metered.filter((w) => w.id === id);
  };
  const jobPolls = (number: string) => fake.requests.filter((r) => r.method === 'GET' && r.path === `${VERTEX_BASE_PATH}/batchPredictionJobs/${number}`);
  /** Registers the job, then walks it to `state` and waits for the gateway's terminal record. */
  async function runToEnd(number: string, state: string, endpoint = '/v1/chat/completions', terminal = 'completed') {
    const created = await register({ provider_batch_id: number, endpoint });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    fake.setState(number, state);
    await eventually(async () => assert.equal(await statusOf(created.body.id), terminal), 5000, 10);
    return (await get(`/v1/batches/${created.body.id}`)).body;
  }

  before(async () => {
    fake = await startFakeVertex();
    gw = await startTestGateway(`
plugins: [./tally.mjs]
providers:
  vertex-ai:
    baseUrl: ${fake.origin}${VERTEX_BASE_PATH}
    apiKey: ${fake.token}
    options:
      storageUrl: ${fake.origin}
pipelines:
  - name: batches
    routes: [/v1/batches, /v1/files]
    plugins: [auth]
jobs:
  pollIntervalMs: 10
batches:
  pollIntervalMs: { vertex: 40 }
`, { files: TALLY_FILES });
    metered = (gw.gateway.pluginState('tally') as { seen: MeteredWork[] }).seen;
    key = await gw.createKey({ scopes: { capabilities: ['batch', 'files'] } });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('a Gemini job registered by number: PENDING -> RUNNING -> SUCCEEDED, its predictions file a gateway file, settled once', async () => {
    fake.failIds.add('v-2');
    fake.listPageSize = 1;
    const job = fake.createJob(['v-1', 'v-2', 'v-3']);
    const created = await register({ provider_batch_id: job.number, metadata: { origin: 'console' } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const batch = created.body;
    assert.deepEqual([batch.provider, batch.provider_batch_id, batch.status, batch.request_counts], ['vertex-ai', job.name, 'validating', { total: 0, completed: 0, failed: 0 }]);
    const again = await register({ provider_batch_id: job.name });
    assert.equal(again.body.id, batch.id, 'the job by its resource name is the same batch');

    fake.setState(job.number, 'JOB_STATE_RUNNING');
    await eventually(async () => assert.equal(await statusOf(batch.id), 'in_progress'), 5000, 10);
    fake.setState(job.number, 'JOB_STATE_SUCCEEDED');
    await eventually(async () => assert.equal(await statusOf(batch.id), 'completed'), 5000, 10);
    const done = (await get(`/v1/batches/${batch.id}`)).body;
    assert.deepEqual([done.request_counts, done.error_file_id], [{ total: 3, completed: 2, failed: 1 }, null]);

    const predictions = `${job.outputDirectory}/predictions.jsonl`;
    const output = (await get(`/v1/files/${done.output_file_id}`)).body;
    assert.deepEqual([output.provider, output.purpose, output.filename, output.bytes], ['vertex-ai', 'batch_output', 'predictions.jsonl', fake.objects.get(predictions)!.data.length]);
    assert.equal(await resolveFile(gw.gateway.services.db, 'default', done.output_file_id, 'vertex-ai'), predictions);

    const [work, ...more] = await workOf(batch.id);
    assert.equal(more.length, 0, 'one usage record');
    assert.deepEqual(work!.usage, { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 });
    assert.deepEqual([work!.provider, work!.upstreamModel, work!.modality, work!.status, work!.requests], ['vertex-ai', GEMINI_MODEL, 'chat', 'completed', { total: 3, completed: 2, failed: 1 }]);

    const listings = fake.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/storage/v1/b/vertex-out/o?'));
    assert.equal(listings.length, 2, 'two pages of one entry: the predictions file and the incremental_predictions/ folder');
    assert.ok(listings.every((r) => new URL(r.path, fake.origin).searchParams.get('delimiter') === '/'));
    const reads = fake.requests.filter((r) => r.path.endsWith('?alt=media')).map((r) => decodeURIComponent(r.path));
    assert.deepEqual(reads, [`/storage/v1/b/vertex-out/o/${predictions.slice('gs://vertex-out/'.length)}?alt=media`], 'the incremental copy is never read');

    const polls = jobPolls(job.number).length;
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(jobPolls(job.number).length, polls, 'a terminal job is polled no more');
    assert.equal((await fetch(`${gw.url}/v1/files/${done.output_file_id}`, { method: 'DELETE', headers: auth() })).status, 200);
    assert.ok(!fake.objects.has(predictions), 'deleting the output file deletes its object');
    assert.deepEqual(fake.unauthorized, []);
    assert.ok(fake.requests.every((r) => r.headers.authorization === `Bearer ${fake.token}`), 'the OAuth token on every job and storage request');
  });

  test('several predictions files: the first is the output file, settlement reads them all in order', async () => {
    fake.listPageSize = 1000;
    const job = fake.createJob(['m-1', 'm-2', 'm-3', 'm-4'], { files: 2 });
    const done = await runToEnd(job.number, 'JOB_STATE_SUCCEEDED');
    assert.equal(await resolveFile(gw.gateway.services.db, 'default', done.output_file_id, 'vertex-ai'), `${job.outputDirectory}/predictions_0001.jsonl`);
    const [work] = await workOf(done.id);
    assert.deepEqual(work!.usage, { prompt_tokens: 40, completion_tokens: 20, total_tokens: 60 });
    const reads = fake.requests.filter((r) => r.path.endsWith('?alt=media') && decodeURIComponent(r.path).includes(job.outputDirectory!.slice('gs://vertex-out/'.length)));
    assert.deepEqual(reads.map((r) => decodeURIComponent(r.path).replace(/^.*\//, '')), ['predictions_0001.jsonl?alt=media', 'predictions_0002.jsonl?alt=media']);
  });

  test('a text embeddings job (endpoint /v1/embeddings): tokens from each prediction\'s statistics', async () => {
    const job = fake.createJob(['e-1', 'e-2'], { kind: 'embeddings', model: 'publishers/google/models/text-embedding-005' });
    const done = await runToEnd(job.number, 'JOB_STATE_SUCCEEDED', '/v1/embeddings');
    assert.deepEqual([done.endpoint, done.request_counts], ['/v1/embeddings', { total: 2, completed: 2, failed: 0 }]);
    const [work] = await workOf(done.id);
    assert.deepEqual([work!.modality, work!.usage], ['embeddings', { prompt_tokens: 14, completion_tokens: 0, total_tokens: 14 }]);
  });

  test('a job writing to BigQuery: completed with its counts, no output file, settled without usage', async () => {
    const job = fake.createJob(['b-1', 'b-2'], { output: 'bigquery' });
    const done = await runToEnd(job.number, 'JOB_STATE_SUCCEEDED');
    assert.deepEqual([done.request_counts, done.output_file_id, done.error_file_id], [{ total: 2, completed: 2, failed: 0 }, null, null]);
    const [work] = await workOf(done.id);
    assert.equal(work!.usage.total_tokens, 0);
  });

  test('cancel sends :cancel; the job reported CANCELLED ends the batch cancelled, with nothing to read', async () => {
    const job = fake.createJob(['c-1', 'c-2', 'c-3']);
    const batch = (await register({ provider_batch_id: job.number })).body;
    fake.setState(job.number, 'JOB_STATE_RUNNING');
    await eventually(async () => assert.equal(await statusOf(batch.id), 'in_progress'), 5000, 10);
    const cancelled = await postJson(`${gw.url}/v1/batches/${batch.id}/cancel`, {}, auth());
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    assert.ok(cancelled.body.cancel_requested_at > 0);
    const cancel = fake.requests.find((r) => r.method === 'POST' && r.path === `${VERTEX_BASE_PATH}/batchPredictionJobs/${job.number}:cancel`)!;
    assert.equal(cancel.headers.authorization, `Bearer ${fake.token}`);
    assert.equal(job.state, 'JOB_STATE_CANCELLING');
    fake.setState(job.number, 'JOB_STATE_CANCELLED');
    await eventually(async () => assert.equal(await statusOf(batch.id), 'cancelled'), 5000, 10);
    const done = (await get(`/v1/batches/${batch.id}`)).body;
    assert.deepEqual([done.request_counts, done.output_file_id], [{ total: 3, completed: 0, failed: 0 }, null]);
    const [work] = await workOf(batch.id);
    assert.deepEqual([work!.status, work!.usage.total_tokens], ['cancelled', 0]);
  });

  test('a partner model\'s job is 400 CAPABILITY_NOT_SUPPORTED and an unknown job 404 NOT_FOUND; neither is recorded', async () => {
    const claude = fake.createJob(['x-1'], { model: 'publishers/anthropic/models/claude-3-5-haiku' });
    const refused = await register({ provider_batch_id: claude.number });
    assert.deepEqual([refused.status, refused.body.error.code], [400, 'CAPABILITY_NOT_SUPPORTED'], JSON.stringify(refused.body));
    const missing = await register({ provider_batch_id: '999999' });
    assert.deepEqual([missing.status, missing.body.error.code], [404, 'NOT_FOUND'], JSON.stringify(missing.body));
    const listed = (await get('/v1/batches?limit=100')).body.data as Array<{ provider_batch_id: string }>;
    assert.ok(!listed.some((b) => b.provider_batch_id.endsWith(`/${claude.number}`) || b.provider_batch_id.endsWith('/999999')));
    const wrong = await register({ provider_batch_id: claude.number, endpoint: '/v1/messages' });
    assert.deepEqual([wrong.status, wrong.body.error.code], [400, 'CAPABILITY_NOT_SUPPORTED']);
  });
});
