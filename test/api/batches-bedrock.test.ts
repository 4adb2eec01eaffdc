/**
 * Bedrock batch inference jobs registered with the gateway (POST /v1/batches with provider_batch_id = the job's
 * ARN) and polled to the end against the fake control plane and S3, every signature checked: a job walks
 * Submitted -> InProgress -> Completed, its first output object becomes the batch's output file, the manifest gives
 * the final counts, and settlement sums the usage of every output object into one usage record; a Stopped job
 * ends cancelled; a cancel sends StopModelInvocationJob; what Bedrock cannot do is refused before any call.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { MeteredWork } from '../../core/pipeline/metered.ts';
import { TALLY_FILES } from '../fakes/batches.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { ACCESS_KEY, REGION, SECRET, startFakeAws, type FakeAws, type FakeJob } from '../providers/bedrock-files-fake.ts';

const config = (origin: string) => `
plugins: [./tally.mjs]
providers:
  bedrock:
    baseUrl: ${origin}/runtime
    options:
      region: ${REGION}
      accessKeyId: ${ACCESS_KEY}
      secretAccessKey: ${SECRET}
      s3Endpoint: ${origin}/s3
      controlPlaneUrl: ${origin}/bedrock
pipelines:
  - name: batches
    routes: [/v1/batches, /v1/files]
    plugins: [auth, usage]
jobs:
  pollIntervalMs: 10
batches:
  pollIntervalMs: { bedrock: 40 }
`;

const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';
const ok = (id: string, input: number, output: number) => JSON.stringify({
  recordId: id, modelInput: { anthropic_version: 'bedrock-2023-05-31', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] },
  modelOutput: { id: `msg_${id}`, type: 'message', role: 'assistant', model: 'claude-3-haiku-20240307', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: input, output_tokens: output } },
});
const failed = (id: string) => JSON.stringify({ recordId: id, modelInput: { messages: [] }, error: { errorCode: 400, errorMessage: 'Malformed input request' } });

interface BatchJson {
  id: string; provider: string; provider_batch_id: string; status: string; output_file_id: string | null; error_file_id: string | null;
  request_counts: { total: number; completed: number; failed: number };
}
interface FileJson { provider: string; purpose: string; bytes: number; filename: string }

describe('/v1/batches: bedrock model invocation jobs', () => {
  let fake: FakeAws;
  let gw: TestGateway;
  let key: string;
  let metered: MeteredWork[];

  const auth = () => ({ authorization: `Bearer ${key}` });
  const get = async <T = BatchJson>(path: string) => {
    const response = await fetch(`${gw.url}${path}`, { headers: auth() });
    return { status: response.status, body: (await response.json()) as T };
  };
  const register = (body: Record<string, unknown>) => postJson(`${gw.url}/v1/batches`, { provider: 'bedrock', endpoint: '/v1/chat/completions', ...body }, auth());
  const statusOf = async (id: string) => (await get(`/v1/batches/${id}`)).body.status;
  const newJob = (status = 'Submitted'): FakeJob => fake.createJob({ modelId: MODEL, inputUri: 's3://batch-in/jobs/input.jsonl', outputUri: 's3://batch-out/results/', status });
  const folderOf = (job: FakeJob) => `batch-out/results/${job.arn.slice(job.arn.lastIndexOf('/') + 1)}`;

  before(async () => {
    fake = await startFakeAws();
    gw = await startTestGateway(config(fake.origin), { files: TALLY_FILES });
    metered = (gw.gateway.pluginState('tally') as { seen: MeteredWork[] }).seen;
    key = await gw.createKey({ scopes: { capabilities: ['batch', 'files'] } });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('registered by ARN, Submitted -> InProgress -> Completed: output file, the manifest\'s counts, one usage record of every object\'s tokens', async () => {
    const job = newJob();
    const created = await register({ provider_batch_id: job.arn, metadata: { origin: 'console' } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const batch = created.body as BatchJson;
    assert.deepEqual([batch.provider, batch.provider_batch_id, batch.status, batch.request_counts], ['bedrock', job.arn, 'validating', { total: 0, completed: 0, failed: 0 }]);
    const poll = fake.requests.find((r) => r.service === 'bedrock')!;
    assert.deepEqual([poll.method, poll.url], ['GET', `/bedrock/model-invocation-job/${encodeURIComponent(job.arn)}`]);

    job.status = 'InProgress';
    job.counts = { totalRecordCount: 4, successRecordCount: 1, errorRecordCount: 0 };
    await eventually(async () => assert.equal(await statusOf(batch.id), 'in_progress'), 5000, 10);
    await eventually(async () => assert.deepEqual((await get(`/v1/batches/${batch.id}`)).body.request_counts, { total: 4, completed: 1, failed: 0 }), 5000, 10);

    const first = `${ok('REC0000001', 10, 5)}\n${failed('REC0000002')}\n`;
    const second = `${ok('REC0000003', 7, 3)}\n${ok('REC0000004', 3, 2)}\n`;
    fake.objects.set(`${folderOf(job)}/input-a.jsonl.out`, Buffer.from(first));
    fake.objects.set(`${folderOf(job)}/input-b.jsonl.out`, Buffer.from(second));
    fake.objects.set(`${folderOf(job)}/manifest.json.out`, Buffer.from(JSON.stringify({ totalRecordCount: 4, processedRecordCount: 4, successRecordCount: 3, errorRecordCount: 1, inputTokenCount: 20, outputTokenCount: 10 })));
    job.status = 'Completed';
    await eventually(async () => assert.equal(await statusOf(batch.id), 'completed'), 5000, 10);

    const done = (await get(`/v1/batches/${batch.id}`)).body;
    assert.deepEqual([done.request_counts, done.error_file_id], [{ total: 4, completed: 3, failed: 1 }, null]);
    const output = await get<FileJson>(`/v1/files/${done.output_file_id}`);
    assert.equal(output.status, 200, JSON.stringify(output.body));
    assert.deepEqual([output.body.provider, output.body.purpose, output.body.bytes, output.body.filename], ['bedrock', 'batch_output', Buffer.byteLength(first), 'input-a.jsonl.out']);

    await eventually(async () => assert.ok(metered.some((w) => w.id === batch.id)), 5000, 10);
    const work = metered.find((w) => w.id === batch.id)!;
    assert.deepEqual(work.usage, { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 }, 'both output objects read');
    assert.deepEqual([work.provider, work.requestedModel, work.model, work.upstreamModel, work.status], ['bedrock', null, null, 'anthropic.claude-3-haiku-20240307-v1:0', 'completed']);
    assert.deepEqual(work.requests, { total: 4, completed: 3, failed: 1 });
    const rows = await gw.gateway.services.db.query<Record<string, unknown>>('SELECT * FROM usage_records WHERE request_id = $1', [batch.id]);
    assert.equal(rows.length, 1);
    assert.deepEqual([Number(rows[0]!.prompt_tokens), Number(rows[0]!.completion_tokens), Number(rows[0]!.total_tokens), rows[0]!.provider], [20, 10, 30, 'bedrock']);

    assert.deepEqual(fake.requests.filter((r) => r.problem !== null).map((r) => `${r.url}: ${r.problem}`), [], 'every request signed as AWS checks it');
    const polls = fake.requests.filter((r) => r.url === poll.url).length;
    // An absence takes time to show: five poll intervals.
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(fake.requests.filter((r) => r.url === poll.url).length, polls, 'a terminal job is polled no more');
    assert.equal(metered.filter((w) => w.id === batch.id).length, 1);
  });

  test('a Stopped job ends cancelled, with no output file', async () => {
    const job = newJob('InProgress');
    const batch = (await register({ provider_batch_id: job.arn })).body as BatchJson;
    assert.equal(batch.status, 'in_progress');
    job.status = 'Stopped';
    await eventually(async () => assert.equal(await statusOf(batch.id), 'cancelled'), 5000, 10);
    assert.equal((await get(`/v1/batches/${batch.id}`)).body.output_file_id, null);
    await eventually(async () => assert.equal(metered.find((w) => w.id === batch.id)?.status, 'cancelled'), 5000, 10);
  });

  test('cancel sends StopModelInvocationJob, signed for bedrock; polling then follows the job to cancelled', async () => {
    const job = newJob('InProgress');
    const batch = (await register({ provider_batch_id: job.arn })).body as BatchJson;
    const before = fake.requests.length;
    await fetch(`${gw.url}/v1/batches/${batch.id}/cancel`, { method: 'POST', headers: auth() });
    const stop = await fake.waitFor((r) => fake.requests.indexOf(r) >= before && r.method === 'POST');
    assert.deepEqual([stop.url, stop.service, stop.problem, stop.body.length], [`/bedrock/model-invocation-job/${encodeURIComponent(job.arn)}/stop`, 'bedrock', null, 0]);
    assert.equal(job.status, 'Stopping');
    job.status = 'Stopped';
    await eventually(async () => assert.equal(await statusOf(batch.id), 'cancelled'), 5000, 10);
  });

  // StopModelInvocationJob answers an empty body: the cancel's answer is not read.
  test('cancel answers the batch with cancel_requested_at once Bedrock took the stop', async () => {
    const job = newJob('InProgress');
    const batch = (await register({ provider_batch_id: job.arn })).body as BatchJson;
    const cancelled = await postJson(`${gw.url}/v1/batches/${batch.id}/cancel`, {}, auth());
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    assert.equal(typeof cancelled.body.cancel_requested_at, 'number');
  });

  test('an unknown job is 404 NOT_FOUND; an endpoint Bedrock jobs do not take and a submit are 400 before any call', async () => {
    const missing = await register({ provider_batch_id: `arn:aws:bedrock:${REGION}:123456789012:model-invocation-job/000000000000` });
    assert.deepEqual([missing.status, missing.body.error.code], [404, 'NOT_FOUND'], JSON.stringify(missing.body));
    const before = fake.requests.length;
    const messages = await register({ provider_batch_id: 'abc123def456', endpoint: '/v1/messages' });
    assert.deepEqual([messages.status, messages.body.error.code], [400, 'CAPABILITY_NOT_SUPPORTED']);
    const submit = await register({ requests: [{ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: 'x', messages: [] } }] });
    assert.deepEqual([submit.status, submit.body.error.code], [400, 'CAPABILITY_NOT_SUPPORTED'], JSON.stringify(submit.body));
    // Earlier tests' jobs may still be polled meanwhile (GET of their own ARNs): none of these calls went upstream.
    const sent = fake.requests.slice(before).filter((r) => r.method !== 'GET' || r.url.includes('abc123def456'));
    assert.deepEqual(sent, []);
  });
});
