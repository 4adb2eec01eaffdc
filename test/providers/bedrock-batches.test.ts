/**
 * Bedrock's batches translator: every job status mapped to the spec's, what fromBatch reads, the control-plane
 * requests, every modelOutput shape's usage, and, through the core's I/O against the fake control plane and S3
 * (every request's SigV4 checked), locateResults over several output objects listed page by page with the
 * manifest's counts, and the result lines read object after object.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { batchStatus, locateBatchResults, resultLines } from '../../core/dispatch/batches-call.ts';
import { Breakers } from '../../core/dispatch/breakers.ts';
import type { CallDeps } from '../../core/dispatch/exchange.ts';
import type { ProviderBatch, ProviderTarget, UpstreamRequest } from '../../core/dispatch/provider.ts';
import { createProviderIO } from '../../core/dispatch/provider-io.ts';
import { UpstreamClient } from '../../core/dispatch/upstream.ts';
import { GatewayError } from '../../core/errors.ts';
import bedrock from '../../providers/bedrock/index.ts';
import { bedrockBatches } from '../../providers/bedrock/batches.ts';
import { ACCESS_KEY, REGION, SECRET, startFakeAws, type FakeAws } from './bedrock-files-fake.ts';

const ARN = 'arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/abc123def456';
const offline: ProviderTarget = {
  slug: 'bedrock', baseUrl: 'https://bedrock-runtime.us-east-1.amazonaws.com', headers: {}, upstreamModel: '',
  options: { region: 'us-east-1', accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret' },
};
const job = (status: string, extra: Record<string, unknown> = {}) => ({
  jobArn: ARN, jobName: 'nightly', modelId: 'anthropic.claude-3-haiku-20240307-v1:0', status,
  inputDataConfig: { s3InputDataConfig: { s3Uri: 's3://in-bucket/batch/input.jsonl', s3InputFormat: 'JSONL' } },
  outputDataConfig: { s3OutputDataConfig: { s3Uri: 's3://out-bucket/results/' } },
  ...extra,
});
const isMalformed = (err: unknown) => err instanceof GatewayError && err.code === 'UPSTREAM_ERROR' && /malformed/.test(err.message);

describe('bedrock batches: the translator', () => {
  test('every documented status maps to one of the spec\'s six; an unknown one is a malformed answer', () => {
    const expected: Record<string, string> = {
      Submitted: 'validating', Validating: 'validating', Scheduled: 'validating', InProgress: 'in_progress', Stopping: 'in_progress',
      Completed: 'completed', PartiallyCompleted: 'completed', Failed: 'failed', Stopped: 'cancelled', Expired: 'expired',
    };
    for (const [status, mapped] of Object.entries(expected)) assert.equal(bedrockBatches.fromBatch(job(status), offline).status, mapped, status);
    assert.throws(() => bedrockBatches.fromBatch(job('Paused'), offline), isMalformed);
    assert.throws(() => bedrockBatches.fromBatch(job('toString'), offline), isMalformed);
    assert.throws(() => bedrockBatches.fromBatch({ status: 'Completed' }, offline), isMalformed);
  });

  test('fromBatch: the ARN, the model, both S3 locations; counts zero unless the job reports them', () => {
    assert.deepEqual(bedrockBatches.fromBatch(job('InProgress'), offline), {
      id: ARN, status: 'in_progress', counts: { total: 0, completed: 0, failed: 0 }, outputFileId: null, errorFileId: null,
      model: 'anthropic.claude-3-haiku-20240307-v1:0', inputS3Uri: 's3://in-bucket/batch/input.jsonl', outputS3Uri: 's3://out-bucket/results/',
    });
    const counted = bedrockBatches.fromBatch(job('InProgress', { totalRecordCount: 10, processedRecordCount: 6, successRecordCount: 5, errorRecordCount: 1 }), offline);
    assert.deepEqual(counted.counts, { total: 10, completed: 5, failed: 1 });
  });

  test('requests: the job by its ARN as one path segment on the control plane of the region, or on controlPlaneUrl', () => {
    const status = bedrockBatches.status(ARN, offline);
    assert.deepEqual([status.method, status.path],
      ['GET', 'https://bedrock.us-east-1.amazonaws.com/model-invocation-job/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Amodel-invocation-job%2Fabc123def456']);
    const cancel = bedrockBatches.cancel('abc123def456', { ...offline, options: { ...offline.options, controlPlaneUrl: 'https://vpce-1.bedrock.internal/' } });
    assert.deepEqual([cancel.method, cancel.path, cancel.body], ['POST', 'https://vpce-1.bedrock.internal/model-invocation-job/abc123def456/stop', undefined]);
    assert.deepEqual(bedrockBatches.endpoints, ['/v1/chat/completions', '/v1/embeddings']);
    assert.equal(bedrockBatches.submit, undefined);
    assert.deepEqual(bedrock.capabilities.batch, { submit: false });
  });

  test('result lines: usage from every modelOutput shape; an error line failed; the model when the output names one', () => {
    const line = (modelOutput: unknown) => bedrockBatches.resultLine({ recordId: 'r1', modelInput: {}, modelOutput });
    assert.deepEqual(line({ output: { message: { role: 'assistant', content: [{ text: 'hi' }] } }, stopReason: 'end_turn', usage: { inputTokens: 12, outputTokens: 4, totalTokens: 16 } }),
      { ok: true, model: null, usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 } }, 'Converse');
    assert.deepEqual(line({ output: { message: { content: [] } }, usage: { inputTokens: 10, outputTokens: 2, cacheReadInputTokens: 30 } }).usage,
      { prompt_tokens: 40, completion_tokens: 2, total_tokens: 42, prompt_tokens_details: { cached_tokens: 30 } }, 'Converse with a cache read');
    assert.deepEqual(line({ id: 'msg_1', type: 'message', model: 'claude-3-haiku-20240307', content: [], usage: { input_tokens: 9, output_tokens: 3 } }),
      { ok: true, model: 'claude-3-haiku-20240307', usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 } }, 'Anthropic Messages');
    assert.deepEqual(line({ inputTextTokenCount: 8, results: [{ tokenCount: 3, outputText: 'blue\n', completionReason: 'FINISH' }, { tokenCount: 2 }] }).usage,
      { prompt_tokens: 8, completion_tokens: 5, total_tokens: 13 }, 'Titan Text');
    assert.deepEqual(line({ embedding: [0.1, 0.2], inputTextTokenCount: 6 }).usage, { prompt_tokens: 6, completion_tokens: 0, total_tokens: 6 }, 'Titan Embeddings');
    assert.deepEqual(line({ generation: 'ok', prompt_token_count: 20, generation_token_count: 7, stop_reason: 'stop' }).usage,
      { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27 }, 'Llama');
    assert.deepEqual(line({ outputs: [{ text: 'ok', stop_reason: 'stop' }] }), { ok: true, model: null, usage: null }, 'Mistral: no usage in its body');
    assert.deepEqual(bedrockBatches.resultLine({ recordId: 'r2', modelInput: {}, error: { errorCode: 400, errorMessage: 'bad request' } }), { ok: false, model: null, usage: null });
    assert.deepEqual(bedrockBatches.resultLine(null), { ok: false, model: null, usage: null });
  });
});

describe('bedrock batches: through the core against the fake control plane and S3', () => {
  let fake: FakeAws;
  let upstream: UpstreamClient;
  let deps: CallDeps;
  let target: ProviderTarget;
  const signal = () => AbortSignal.timeout(10_000);
  const record = (n: number, tokens: [number, number] | null) => JSON.stringify(tokens
    ? { recordId: `REC${n}`, modelInput: { messages: [] }, modelOutput: { type: 'message', model: 'claude-3-haiku-20240307', usage: { input_tokens: tokens[0], output_tokens: tokens[1] } } }
    : { recordId: `REC${n}`, modelInput: { messages: [] }, error: { errorCode: 400, errorMessage: 'Malformed input request' } });

  before(async () => {
    fake = await startFakeAws();
    upstream = new UpstreamClient({
      connectTimeoutMs: 5000, headersTimeoutMs: 5000, bodyTimeoutMs: 5000, keepAliveTimeoutMs: 1000, connectionsPerOrigin: 4, queueTimeoutMs: 5000,
      maxFrameBytes: 1 << 20, maxBodyBytes: 1 << 20,
      breaker: { errorThresholdPercentage: 50, volumeThreshold: 100, rollingCountTimeoutMs: 10_000, resetTimeoutMs: 1000 },
    });
    deps = { upstream, breakers: new Breakers({ errorThresholdPercentage: 50, volumeThreshold: 100, rollingCountTimeoutMs: 10_000, resetTimeoutMs: 1000 }), io: createProviderIO(upstream, Date.now) };
    target = {
      slug: 'bedrock', baseUrl: `${fake.origin}/runtime`, headers: {}, upstreamModel: '',
      options: { region: REGION, accessKeyId: ACCESS_KEY, secretAccessKey: SECRET, s3Endpoint: `${fake.origin}/s3`, controlPlaneUrl: `${fake.origin}/bedrock` },
    };
  });
  after(async () => {
    await upstream?.close();
    await fake?.close();
  });

  test('a completed job: every .out object found across listing pages, the manifest\'s counts, the lines of every object in turn', async () => {
    const created = fake.createJob({ modelId: 'anthropic.claude-3-haiku-20240307-v1:0', inputUri: 's3://batch-in/jobs/', outputUri: 's3://batch-out/results/' });
    const jobId = created.arn.slice(created.arn.lastIndexOf('/') + 1);
    const folder = `results/${jobId}`;
    const first = `${[record(1, [10, 5]), record(2, null)].join('\n')}\n`;
    const second = `${[record(3, [7, 2]), record(4, [1, 1])].join('\n')}\n`;
    fake.objects.set(`batch-out/${folder}/part one.jsonl.out`, Buffer.from(first));
    fake.objects.set(`batch-out/${folder}/part-two.jsonl.out`, Buffer.from(second));
    fake.objects.set(`batch-out/${folder}/sub/part-three.jsonl.out`, Buffer.from(`${record(5, [2, 3])}`));
    fake.objects.set(`batch-out/${folder}/manifest.json.out`, Buffer.from(JSON.stringify({ totalRecordCount: 5, processedRecordCount: 5, successRecordCount: 4, errorRecordCount: 1, inputTokenCount: 20, outputTokenCount: 11 })));
    fake.objects.set(`batch-out/${folder}/notes.txt`, Buffer.from('not a result'));
    fake.objects.set(`batch-out/results/${jobId}0/other.jsonl.out`, Buffer.from('another job\'s folder'));
    created.status = 'Completed';

    const seen = await batchStatus(deps, bedrock, target, created.arn, signal());
    assert.deepEqual([seen.id, seen.status, seen.model], [created.arn, 'completed', 'anthropic.claude-3-haiku-20240307-v1:0']);
    const located = await locateBatchResults(deps, bedrock, target, seen, signal());
    const ids = [`s3://batch-out/${folder}/part one.jsonl.out`, `s3://batch-out/${folder}/part-two.jsonl.out`, `s3://batch-out/${folder}/sub/part-three.jsonl.out`];
    assert.deepEqual(located.resultFileIds, ids);
    assert.equal(located.outputFileId, ids[0]);
    assert.equal(located.errorFileId, null);
    assert.deepEqual(located.fileInfo, {
      [ids[0]!]: { bytes: Buffer.byteLength(first), filename: 'part one.jsonl.out' },
      [ids[1]!]: { bytes: Buffer.byteLength(second), filename: 'part-two.jsonl.out' },
      [ids[2]!]: { bytes: Buffer.byteLength(record(5, [2, 3])), filename: 'part-three.jsonl.out' },
    });
    assert.deepEqual(located.counts, { total: 5, completed: 4, failed: 1 }, 'the manifest\'s counts');
    const listings = fake.requests.filter((r) => r.method === 'GET' && r.url.startsWith('/s3/batch-out?'));
    assert.equal(listings.length, 3, 'five objects under the job\'s folder, two per page: three pages');
    assert.ok(listings.slice(1).every((r) => r.url.includes('continuation-token=')));
    assert.ok(listings.every((r) => r.url.includes(`prefix=results%2F${jobId}%2F`) && r.url.includes('encoding-type=url')));

    const settled = JSON.parse(JSON.stringify(located)) as ProviderBatch; // as the settlement job's payload carries it
    const lines = [];
    for await (const line of resultLines(deps, bedrock, target, settled, signal())) lines.push(bedrockBatches.resultLine(line));
    assert.deepEqual(lines.map((l) => [l.ok, l.usage?.total_tokens ?? null]), [[true, 15], [false, null], [true, 9], [true, 2], [true, 5]], 'the last object ends without a newline');
    assert.ok(fake.requests.some((r) => r.url === `/s3/batch-out/results/${jobId}/part%20one.jsonl.out`), 'keys are encoded once on the wire');
    assert.deepEqual(fake.requests.filter((r) => r.problem !== null).map((r) => `${r.url}: ${r.problem}`), [], 'every request signed as AWS checks it');
    assert.deepEqual([...new Set(fake.requests.map((r) => r.service))].sort(), ['bedrock', 's3']);
  });

  test('a job that did not carry its output location asks the control plane again; a job without outputs has no result files', async () => {
    const created = fake.createJob({ modelId: 'amazon.titan-embed-text-v2:0', inputUri: 's3://batch-in/x.jsonl', outputUri: 's3://batch-out/empty', status: 'Failed' });
    created.counts = { totalRecordCount: 3, successRecordCount: 0, errorRecordCount: 0 };
    const bare: ProviderBatch = { id: created.arn, status: 'failed', counts: { total: 3, completed: 0, failed: 0 }, outputFileId: null, errorFileId: null };
    const before = fake.requests.length;
    const located = await locateBatchResults(deps, bedrock, target, bare, signal());
    assert.deepEqual([located.outputFileId, located.resultFileIds, located.counts], [null, [], { total: 3, completed: 0, failed: 0 }]);
    const sent = fake.requests.slice(before).map((r) => `${r.method} ${r.url.split('?')[0]}`);
    assert.deepEqual(sent, [`GET /bedrock/model-invocation-job/${encodeURIComponent(created.arn)}`, 'GET /s3/batch-out']);
    assert.equal(bedrockBatches.results(located, target), null);
  });

  test('an unknown job is the control plane\'s 404, mapped; a request that is not signed is refused by the fake', async () => {
    await assert.rejects(batchStatus(deps, bedrock, target, 'arn:aws:bedrock:eu-west-3:123456789012:model-invocation-job/000000000000', signal()),
      (err: unknown) => err instanceof GatewayError && (err.details as { upstreamStatus?: number }).upstreamStatus === 404 && /ResourceNotFoundException/.test(err.message));
    const unsigned = await fetch(`${fake.origin}/s3/batch-out?list-type=2`);
    assert.equal(unsigned.status, 403);
    assert.match(await unsigned.text(), /<Code>SignatureDoesNotMatch<\/Code>/);
  });

  test('S3 errors are read from their XML: the code and message reach the caller\'s error', async () => {
    const request: UpstreamRequest = { method: 'GET', path: `${fake.origin}/s3/batch-out/missing.out`, headers: {} };
    const signed = await bedrock.authorize!(request, target, deps.io, signal());
    const response = await upstream.send(target.baseUrl, signed, signal());
    const text = await response.body.text();
    const err = bedrock.mapError(response.statusCode, text, target, response.headers);
    assert.equal((err.details as { upstreamStatus?: number }).upstreamStatus, 404);
    assert.match(err.message, /NoSuchKey: The specified key does not exist\./);
  });
});
