/**
 * The Vertex AI batches translator on its own: every JOB_STATE_* mapped to the spec's statuses, counts from
 * completionStats, the model, the job and cancel requests, locateResults over a listing of several pages (only the
 * directory's own predictions files, an errors file, BigQuery output), the result requests, and result lines of
 * Gemini and of the text embedding models.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { BatchStorageIO, ProviderTarget, UpstreamRequest } from '../../core/dispatch/provider.ts';
import { pollInterval } from '../../core/api/batches-common.ts';
import vertexAi from '../../providers/vertex-ai/index.ts';
import { vertexBatches, type VertexBatch } from '../../providers/vertex-ai/batches.ts';
import { parseConfig } from '../helpers/config.ts';

const BASE = 'https://us-central1-aiplatform.googleapis.com/v1/projects/p1/locations/us-central1';
const target = (baseUrl = BASE, options: Record<string, unknown> = {}): ProviderTarget => ({ slug: 'vertex-ai', baseUrl, apiKey: 'ya29.x', headers: {}, options, upstreamModel: '' });
const NAME = 'projects/123456789/locations/us-central1/batchPredictionJobs/4567';
const DIR = 'gs://out-bucket/runs/prediction-model-2025-01-01T00:00:00.000000Z';
const job = (state: string, extra: Record<string, unknown> = {}) => ({ name: NAME, state, model: 'publishers/google/models/gemini-2.0-flash-001', ...extra });
const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as { code?: string }).code;
  }
  return 'no error';
};

describe('vertex-ai batches: jobs', () => {
  test('every JOB_STATE_* maps to one of the spec\'s six; an unknown state or a name that is no job is a malformed answer', () => {
    const expected: Record<string, string> = {
      QUEUED: 'validating', PENDING: 'validating', RUNNING: 'in_progress', CANCELLING: 'in_progress', UPDATING: 'in_progress', PAUSED: 'in_progress',
      SUCCEEDED: 'completed', PARTIALLY_SUCCEEDED: 'completed', FAILED: 'failed', CANCELLED: 'cancelled', EXPIRED: 'expired',
    };
    for (const [state, status] of Object.entries(expected)) assert.equal(vertexBatches.fromBatch(job(`JOB_STATE_${state}`), target()).status, status, state);
    assert.equal(code(() => vertexBatches.fromBatch(job('JOB_STATE_UNSPECIFIED'), target())), 'UPSTREAM_ERROR');
    assert.equal(code(() => vertexBatches.fromBatch(job('BATCH_STATE_RUNNING'), target())), 'UPSTREAM_ERROR', 'Gemini API states are not Vertex\'s');
    assert.equal(code(() => vertexBatches.fromBatch({ ...job('JOB_STATE_RUNNING'), name: 'projects/1/locations/l/customJobs/9' }, target())), 'UPSTREAM_ERROR');
    assert.equal(code(() => vertexBatches.fromBatch(null, target())), 'UPSTREAM_ERROR');
  });

  test('counts from completionStats (int64 strings), the model without its publisher path, where the results were written', () => {
    const batch = vertexBatches.fromBatch(job('JOB_STATE_SUCCEEDED', {
      completionStats: { successfulCount: '5', failedCount: '2', incompleteCount: '1' }, outputInfo: { gcsOutputDirectory: DIR },
    }), target()) as VertexBatch;
    assert.deepEqual(batch, {
      id: NAME, status: 'completed', counts: { total: 8, completed: 5, failed: 2 }, outputFileId: null, errorFileId: null,
      model: 'gemini-2.0-flash-001', outputDirectory: DIR,
    });
    const running = vertexBatches.fromBatch(job('JOB_STATE_PENDING'), target()) as VertexBatch;
    assert.deepEqual([running.counts, running.outputDirectory], [{ total: 0, completed: 0, failed: 0 }, null], 'no completionStats yet');
    const tuned = vertexBatches.fromBatch(job('JOB_STATE_RUNNING', { model: 'projects/p1/locations/us-central1/models/998877' }), target());
    assert.equal(tuned.model, 'projects/p1/locations/us-central1/models/998877', 'a tuned model keeps its resource name');
    const bigquery = vertexBatches.fromBatch(job('JOB_STATE_SUCCEEDED', { outputInfo: { bigqueryOutputDataset: 'bq://p1.d', bigqueryOutputTable: 'predictions_1' } }), target()) as VertexBatch;
    assert.equal(bigquery.outputDirectory, null);
  });

  test('a partner model\'s job (Claude, Llama) is refused: 400 CAPABILITY_NOT_SUPPORTED, as its results have other shapes', () => {
    assert.throws(() => vertexBatches.fromBatch(job('JOB_STATE_RUNNING', { model: 'publishers/anthropic/models/claude-3-5-haiku' }), target()),
      (err: { code: string; status: number; message: string }) => err.code === 'CAPABILITY_NOT_SUPPORTED' && err.status === 400 && /claude-3-5-haiku/.test(err.message));
  });

  test('requests: the job by its last segment under the base URL, cancel as a POST; the global location on its own host', () => {
    const status = vertexBatches.status(NAME, target());
    assert.deepEqual([status.method, status.path, status.headers['content-type']], ['GET', '/batchPredictionJobs/4567', undefined]);
    assert.equal(vertexBatches.status('4567', target()).path, '/batchPredictionJobs/4567', 'the bare number names the same job');
    assert.equal(vertexBatches.status('../x', target()).path, '/batchPredictionJobs/x');
    assert.equal(vertexBatches.status('a b', target()).path, '/batchPredictionJobs/a%20b');
    assert.equal(vertexBatches.status('12:cancel', target()).path, '/batchPredictionJobs/12%3Acancel');
    assert.equal(vertexBatches.status('projects/p1/batchPredictionJobs/', target()).path, '/batchPredictionJobs/projects%2Fp1%2FbatchPredictionJobs%2F', 'never the collection');
    const cancel = vertexBatches.cancel(NAME, target());
    assert.deepEqual([cancel.method, cancel.path, cancel.body], ['POST', '/batchPredictionJobs/4567:cancel', '{}']);
    const global = 'https://global-aiplatform.googleapis.com/v1/projects/p1/locations/global';
    assert.equal(vertexBatches.status('4567', target(global)).path, 'https://aiplatform.googleapis.com/v1/projects/p1/locations/global/batchPredictionJobs/4567');
  });

  test('the provider declares polling only, for chat and embeddings batches, at the default cadence of its family', async () => {
    assert.deepEqual(vertexAi.capabilities.batch, { submit: false });
    assert.equal(vertexAi.batches!.submit, undefined);
    assert.deepEqual(vertexAi.batches!.endpoints, ['/v1/chat/completions', '/v1/embeddings']);
    const { config } = await parseConfig('{}', { file: '/nowhere/pipelines.yaml', display: 'pipelines.yaml', env: {}, cwd: '/nowhere' });
    assert.equal(pollInterval(config, vertexAi.family), 60_000);
  });
});

/** A storage that answers listing pages in turn and records what was asked. */
function pagedStorage(pages: Array<Record<string, unknown> | null>): BatchStorageIO & { asked: UpstreamRequest[] } {
  const asked: UpstreamRequest[] = [];
  return {
    asked,
    async text(request) {
      asked.push(request);
      const page = pages[asked.length - 1];
      if (page === undefined) throw new Error(`unexpected request ${request.path}`);
      return page === null ? null : JSON.stringify(page);
    },
  };
}
const item = (name: string, size: number) => ({ kind: 'storage#object', bucket: 'out-bucket', name: `runs/prediction-model-2025-01-01T00:00:00.000000Z/${name}`, size: String(size) });

describe('vertex-ai batches: results in Cloud Storage', () => {
  const ended = () => vertexBatches.fromBatch(job('JOB_STATE_SUCCEEDED', { outputInfo: { gcsOutputDirectory: DIR } }), target(BASE, { storageUrl: 'https://gcs.example' }));

  test('locateResults lists the directory page by page; its own predictions files are the results, the first the output file', async () => {
    const storage = pagedStorage([
      { kind: 'storage#objects', items: [item('errors_0001.jsonl', 40), item('predictions_0002.jsonl', 20)], prefixes: ['runs/prediction-model-2025-01-01T00:00:00.000000Z/incremental_predictions/'], nextPageToken: 'tok 1' },
      // A deeper object, should an answer hold one, is not the directory's own.
      { items: [item('incremental_predictions/predictions_0001.jsonl', 999), item('predictions_0001.jsonl', 10), item('job.log', 5)] },
    ]);
    const located = await vertexBatches.locateResults!(ended(), target(BASE, { storageUrl: 'https://gcs.example' }), storage);
    const file = (name: string) => `${DIR}/${name}`;
    assert.deepEqual([located.outputFileId, located.errorFileId, located.resultFileIds], [file('predictions_0001.jsonl'), file('errors_0001.jsonl'), [file('predictions_0001.jsonl'), file('predictions_0002.jsonl')]]);
    assert.deepEqual(located.fileInfo, {
      [file('predictions_0001.jsonl')]: { bytes: 10, filename: 'predictions_0001.jsonl' },
      [file('predictions_0002.jsonl')]: { bytes: 20, filename: 'predictions_0002.jsonl' },
      [file('errors_0001.jsonl')]: { bytes: 40, filename: 'errors_0001.jsonl' },
    });
    assert.deepEqual([located.status, located.counts, located.model], ['completed', { total: 0, completed: 0, failed: 0 }, 'gemini-2.0-flash-001'], 'the rest as the status said');
    const urls = storage.asked.map((r) => new URL(r.path));
    assert.deepEqual(urls.map((u) => `${u.origin}${u.pathname}`), ['https://gcs.example/storage/v1/b/out-bucket/o', 'https://gcs.example/storage/v1/b/out-bucket/o']);
    assert.deepEqual(urls.map((u) => [u.searchParams.get('prefix'), u.searchParams.get('delimiter'), u.searchParams.get('pageToken')]), [
      ['runs/prediction-model-2025-01-01T00:00:00.000000Z/', '/', null],
      ['runs/prediction-model-2025-01-01T00:00:00.000000Z/', '/', 'tok 1'],
    ]);
    assert.deepEqual(JSON.parse(JSON.stringify(located)), located, 'plain JSON, for the settlement job\'s payload');
  });

  test('one GET of each result file\'s media, in order, its name escaped; none without result files', async () => {
    const located = await vertexBatches.locateResults!(ended(), target(), pagedStorage([{ items: [item('predictions.jsonl', 3)] }]));
    const requests = vertexBatches.results(located, target(BASE, { storageUrl: 'https://gcs.example/' })) as UpstreamRequest[];
    assert.deepEqual(requests.map((r) => [r.method, r.path]), [['GET', 'https://gcs.example/storage/v1/b/out-bucket/o/runs%2Fprediction-model-2025-01-01T00%3A00%3A00.000000Z%2Fpredictions.jsonl?alt=media']]);
    const empty = await vertexBatches.locateResults!(ended(), target(), pagedStorage([{ kind: 'storage#objects' }]));
    assert.deepEqual([empty.outputFileId, empty.resultFileIds, vertexBatches.results(empty, target())], [null, [], null]);
    const gone = await vertexBatches.locateResults!(ended(), target(), pagedStorage([null]));
    assert.deepEqual(gone.resultFileIds, [], 'a directory in a bucket that is gone (404) holds nothing');
  });

  test('BigQuery output: no listing, no result files, the counts only', async () => {
    const storage = pagedStorage([]);
    const bigquery = vertexBatches.fromBatch(job('JOB_STATE_SUCCEEDED', { completionStats: { successfulCount: '2' }, outputInfo: { bigqueryOutputTable: 'predictions_1' } }), target());
    const located = await vertexBatches.locateResults!(bigquery, target(), storage);
    assert.deepEqual([storage.asked.length, located.outputFileId, located.counts, vertexBatches.results(located, target())], [0, null, { total: 2, completed: 2, failed: 0 }, null]);
  });

  test('a listing that is not one, or whose page token comes back, is a malformed answer', async () => {
    await assert.rejects(vertexBatches.locateResults!(ended(), target(), pagedStorage([{ items: [{ name: 'x' }] }])), (err: { code: string }) => err.code === 'UPSTREAM_ERROR');
    await assert.rejects(vertexBatches.locateResults!(ended(), target(), pagedStorage([{ nextPageToken: 'a' }, { nextPageToken: 'a' }])), /page token repeated/);
  });
});

describe('vertex-ai batches: result lines', () => {
  test('Gemini: {request, response, status}: usage from usageMetadata, the model from modelVersion; a non-empty status failed', () => {
    const ok = vertexBatches.resultLine({ status: '', processed_time: '2025-01-01T00:00:00Z', request: { contents: [] }, response: {
      candidates: [{ content: { parts: [{ text: 'hi' }] }, finishReason: 'STOP' }], modelVersion: 'gemini-2.0-flash-001',
      usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 3, thoughtsTokenCount: 2, totalTokenCount: 12 },
    } });
    assert.deepEqual(ok, { ok: true, model: 'gemini-2.0-flash-001', usage: { prompt_tokens: 7, completion_tokens: 5, total_tokens: 12, completion_tokens_details: { reasoning_tokens: 2 } } });
    const failed = vertexBatches.resultLine({ status: 'Bad Request: {"error": {"code": 400, "message": "bad"}}', request: { contents: [] } });
    assert.deepEqual(failed, { ok: false, model: null, usage: null });
    assert.equal(vertexBatches.resultLine({ request: {}, response: {}, status: { code: 3, message: 'bad' } }).ok, false, 'a status object failed too');
    assert.equal(vertexBatches.resultLine(null).ok, false);
  });

  test('text embeddings: {instance, predictions, status}: tokens summed from statistics.token_count, none when one is missing', () => {
    const prediction = (tokens?: number) => ({ embeddings: { statistics: { ...(tokens === undefined ? {} : { token_count: tokens }), truncated: false }, values: [0.1, 0.2] } });
    assert.deepEqual(vertexBatches.resultLine({ instance: { content: 'a' }, predictions: [prediction(8), prediction(3)], status: '' }),
      { ok: true, model: null, usage: { prompt_tokens: 11, completion_tokens: 0, total_tokens: 11 } });
    assert.deepEqual(vertexBatches.resultLine({ instance: { content: 'a' }, predictions: [prediction(8), prediction()], status: '' }).usage, null, 'a partial sum would under-bill');
    assert.deepEqual(vertexBatches.resultLine({ instance: { content: 'a' }, predictions: [], status: 'Bad Request' }), { ok: false, model: null, usage: null });
  });
});
