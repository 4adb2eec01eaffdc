/**
 * The batches translators of the providers the gateway polls only: Azure OpenAI (OpenAI's API under the resource)
 * and Gemini (Batch Mode): every state mapped to the spec's, counts, the requests they build, result lines.
 */
import assert from 'node:assert/strict';
import type { UpstreamRequest } from '../../core/dispatch/provider.ts';
import { describe, test } from 'node:test';
import { pollInterval } from '../../core/api/batches-common.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { builtInProviders } from '../../providers/index.ts';
import { azureOpenAiBatches } from '../../providers/azure-openai/batches.ts';
import { geminiBatches } from '../../providers/gemini/batches.ts';
import { parseConfig } from '../helpers/config.ts';

const target = (slug: string, baseUrl: string, options: Record<string, unknown> = {}): ProviderTarget => ({ slug, baseUrl, apiKey: 'k', headers: {}, options, upstreamModel: '' });

describe('azure-openai batches', () => {
  const t = target('azure-openai', 'https://res.openai.azure.com/openai', { apiVersion: '2024-10-21' });
  test('OpenAI\'s requests under the resource, with api-version and api-key; no submit', () => {
    assert.equal(azureOpenAiBatches.submit, undefined);
    const status = azureOpenAiBatches.status('batch_1', t);
    assert.deepEqual([status.method, status.path, status.headers['api-key']], ['GET', '/batches/batch_1?api-version=2024-10-21', 'k']);
    assert.equal(azureOpenAiBatches.cancel('batch_1', t).path, '/batches/batch_1/cancel?api-version=2024-10-21');
    const batch = azureOpenAiBatches.fromBatch({ id: 'batch_1', status: 'finalizing', request_counts: { total: 2, completed: 1, failed: 0 }, output_file_id: 'file-o' }, t);
    assert.deepEqual([batch.status, batch.outputFileId], ['in_progress', 'file-o']);
    assert.equal((azureOpenAiBatches.results({ ...batch, status: 'completed' }, t) as UpstreamRequest).path, '/files/file-o/content?api-version=2024-10-21');
    assert.equal(azureOpenAiBatches.fileInfo!('file-o', t).path, '/files/file-o?api-version=2024-10-21');
  });
});

describe('gemini batches', () => {
  const t = target('gemini', 'https://generativelanguage.googleapis.com/v1beta');
  const op = (state: string, extra: Record<string, unknown> = {}) => ({ name: 'batches/b1', metadata: { state, batchStats: { requestCount: '4', successfulRequestCount: '3', failedRequestCount: '1' } }, ...extra });

  test('every BATCH_STATE_* and JOB_STATE_* maps to one of the spec\'s six; an unknown one is a malformed answer', () => {
    const expected: Record<string, string> = {
      PENDING: 'validating', QUEUED: 'validating', RUNNING: 'in_progress', UPDATING: 'in_progress', PAUSED: 'in_progress', CANCELLING: 'in_progress',
      SUCCEEDED: 'completed', PARTIALLY_SUCCEEDED: 'completed', FAILED: 'failed', CANCELLED: 'cancelled', EXPIRED: 'expired',
    };
    for (const [state, mapped] of Object.entries(expected)) {
      for (const prefix of ['BATCH_STATE_', 'JOB_STATE_']) assert.equal(geminiBatches.fromBatch(op(prefix + state), t).status, mapped, prefix + state);
    }
    assert.throws(() => geminiBatches.fromBatch(op('BATCH_STATE_UNSPECIFIED'), t), /malformed/);
    assert.throws(() => geminiBatches.fromBatch({ name: 'operations/x', metadata: { state: 'BATCH_STATE_RUNNING' } }, t), /malformed/);
  });

  test('counts from batchStats (int64 strings); the responses file from the operation\'s response or the batch\'s output', () => {
    const fromOp = geminiBatches.fromBatch(op('BATCH_STATE_SUCCEEDED', { done: true, response: { responsesFile: 'files/out1' } }), t);
    assert.deepEqual(fromOp, { id: 'batches/b1', status: 'completed', counts: { total: 4, completed: 3, failed: 1 }, outputFileId: 'files/out1', errorFileId: null });
    const bare = geminiBatches.fromBatch({ name: 'batches/b1', state: 'JOB_STATE_SUCCEEDED', batchStats: { requestCount: 2 }, output: { responsesFile: 'files/out2' } }, t);
    assert.deepEqual([bare.status, bare.counts.total, bare.outputFileId], ['completed', 2, 'files/out2']);
    const lines = [{ response: { usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2 } }, metadata: { key: 'a' } }, { error: { code: 400 } }];
    const answer = op('BATCH_STATE_SUCCEEDED', { response: { inlinedResponses: { inlinedResponses: lines } } });
    const inlined = geminiBatches.fromBatch(answer, t);
    assert.equal(inlined.outputFileId, null, 'inlined responses are no file');
    assert.equal(inlined.inlineResults, true);
    assert.equal((geminiBatches.results(inlined, t) as UpstreamRequest).path, '/batches/b1', 'inlined results are read from the batch itself');
    assert.deepEqual(geminiBatches.inlineResultLines!(answer), lines);
    assert.deepEqual(geminiBatches.inlineResultLines!({ name: 'batches/b1', state: 'JOB_STATE_SUCCEEDED', output: { inlinedResponses: lines } }), lines, 'a bare list on a batch resource');
    assert.deepEqual(lines.map((line) => geminiBatches.resultLine(line).ok), [true, false]);
    const none = geminiBatches.fromBatch(op('BATCH_STATE_FAILED'), t);
    assert.equal(none.inlineResults, undefined);
    assert.equal(geminiBatches.results(none, t), null, 'a batch with neither has no results');
  });

  test('requests: the batch by name, cancel, file metadata, and the results from the download endpoint beside the version path', () => {
    const status = geminiBatches.status('batches/b1', t);
    assert.deepEqual([status.method, status.path, status.headers['x-goog-api-key']], ['GET', '/batches/b1', 'k']);
    assert.equal(geminiBatches.status('b1', t).path, '/batches/b1', 'the bare id names the same batch');
    assert.equal(geminiBatches.status('batches/../x', t).path, '/batches/..%2Fx', 'names are path-escaped');
    assert.deepEqual([geminiBatches.cancel('batches/b1', t).method, geminiBatches.cancel('batches/b1', t).path], ['POST', '/batches/b1:cancel']);
    const batch = geminiBatches.fromBatch(op('BATCH_STATE_SUCCEEDED', { response: { responsesFile: 'files/out1' } }), t);
    assert.equal((geminiBatches.results(batch, t) as UpstreamRequest).path, 'https://generativelanguage.googleapis.com/download/v1beta/files/out1:download?alt=media');
    assert.equal(geminiBatches.fileInfo!('files/out1', t).path, '/files/out1');
    assert.deepEqual(geminiBatches.fromFileInfo!({ name: 'files/out1', sizeBytes: '1234' }, t), { bytes: 1234, filename: 'out1.jsonl' });
  });

  test('result lines: a response\'s usageMetadata and modelVersion; an error line failed', () => {
    const ok = geminiBatches.resultLine({ key: 'a', response: { usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 3, thoughtsTokenCount: 2 }, modelVersion: 'gemini-2.5-flash' } });
    assert.deepEqual(ok, { ok: true, model: 'gemini-2.5-flash', usage: { prompt_tokens: 7, completion_tokens: 5, total_tokens: 12, completion_tokens_details: { reasoning_tokens: 2 } } });
    assert.deepEqual(geminiBatches.resultLine({ key: 'b', error: { code: 400, message: 'bad' } }), { ok: false, model: null, usage: null });
  });
});

test('the cadence: 60 s by default for azure-openai and gemini, 30 s for openai and anthropic (batches.pollIntervalMs)', async () => {
  const { config } = await parseConfig('{}', { file: '/nowhere/pipelines.yaml', display: 'pipelines.yaml', env: {}, cwd: '/nowhere' });
  const family = (slug: string) => builtInProviders.find((p) => p.slug === slug)!.family;
  assert.deepEqual(['azure-openai', 'gemini', 'openai', 'anthropic'].map((slug) => pollInterval(config, family(slug))), [60_000, 60_000, 30_000, 30_000]);
  assert.deepEqual(['azure-openai', 'gemini'].map((slug) => builtInProviders.find((p) => p.slug === slug)!.capabilities.batch), [{ submit: false }, { submit: false }]);
});
