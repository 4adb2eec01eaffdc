/**
 * The batches translators on their own: every provider status mapped to the spec's, counts, the requests they
 * build, and result lines read for settlement.
 */
import assert from 'node:assert/strict';
import type { UpstreamRequest } from '../../core/dispatch/provider.ts';
import { describe, test } from 'node:test';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { anthropicBatches } from '../../providers/anthropic/batches.ts';
import { openaiBatches } from '../../providers/openai/batches.ts';

const target = (slug: string): ProviderTarget => ({ slug, baseUrl: 'https://example.invalid/v1', apiKey: 'k', headers: {}, options: {}, upstreamModel: '' });

describe('openai batches', () => {
  const t = target('openai');
  test('every status of the Batch API maps to one of the spec\'s six', () => {
    const expected = {
      validating: 'validating', in_progress: 'in_progress', finalizing: 'in_progress', cancelling: 'in_progress',
      completed: 'completed', failed: 'failed', expired: 'expired', cancelled: 'cancelled',
    };
    for (const [status, mapped] of Object.entries(expected)) {
      assert.equal(openaiBatches.fromBatch({ id: 'batch_1', status, request_counts: { total: 4, completed: 3, failed: 1 } }, t).status, mapped, status);
    }
    assert.throws(() => openaiBatches.fromBatch({ id: 'batch_1', status: 'paused' }, t), /UPSTREAM|malformed/);
    assert.throws(() => openaiBatches.fromBatch({ status: 'completed' }, t), /malformed/);
  });

  test('the submit plan: JSONL lines as sent, then a create naming the uploaded file', () => {
    const lines = [{ custom_id: 'a', method: 'POST' as const, url: '/v1/embeddings', body: { model: 'm', input: 'x' } }];
    const plan = openaiBatches.submit!('/v1/embeddings', lines, t);
    assert.equal(plan.kind, 'file');
    if (plan.kind !== 'file') return;
    assert.equal(plan.jsonl, `${JSON.stringify(lines[0])}\n`);
    const create = plan.create('file-abc');
    assert.deepEqual([create.method, create.path, JSON.parse(create.body!)], ['POST', '/batches', { input_file_id: 'file-abc', endpoint: '/v1/embeddings', completion_window: '24h' }]);
    assert.equal(create.headers.authorization, 'Bearer k');
    assert.equal(openaiBatches.status('batch/../x', t).path, '/batches/batch%2F..%2Fx', 'ids are path-escaped');
  });

  test('result lines: success with usage, a failed status, an error', () => {
    const ok = openaiBatches.resultLine({ custom_id: 'a', response: { status_code: 200, body: { model: 'gpt', usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, prompt_tokens_details: { cached_tokens: 1 } } } }, error: null });
    assert.deepEqual(ok, { ok: true, model: 'gpt', usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, prompt_tokens_details: { cached_tokens: 1 } } });
    assert.equal(openaiBatches.resultLine({ custom_id: 'b', response: { status_code: 400, body: {} }, error: null }).ok, false);
    assert.deepEqual(openaiBatches.resultLine({ custom_id: 'c', response: null, error: { code: 'x' } }), { ok: false, model: null, usage: null });
  });
});

describe('anthropic batches', () => {
  const t = target('anthropic');
  const batch = (processing_status: string, counts: Record<string, number>, cancelled = false) => anthropicBatches.fromBatch({
    id: 'msgbatch_1', processing_status, cancel_initiated_at: cancelled ? '2025-01-01T00:00:00Z' : null,
    request_counts: { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0, ...counts },
  }, t);

  test('an ended batch\'s terminal state follows from its counts and whether a cancel was initiated', () => {
    assert.equal(batch('in_progress', { processing: 3 }).status, 'in_progress');
    assert.equal(batch('canceling', { processing: 3 }, true).status, 'in_progress');
    assert.equal(batch('ended', { canceled: 2, succeeded: 1 }, true).status, 'cancelled');
    assert.equal(batch('ended', { succeeded: 1, errored: 2 }).status, 'completed');
    assert.equal(batch('ended', { expired: 3 }).status, 'expired');
    assert.equal(batch('ended', { errored: 2, expired: 1 }).status, 'failed');
    assert.deepEqual(batch('ended', { succeeded: 4, errored: 1, canceled: 2, expired: 3 }).counts, { total: 10, completed: 4, failed: 6 });
    assert.throws(() => batch('archived', {}), /malformed/);
  });

  test('submit carries the lines as params; results come from the batch\'s own results endpoint, never a URL from an answer', () => {
    const plan = anthropicBatches.submit!('/v1/messages', [{ custom_id: 'a', method: 'POST', url: '/v1/messages', body: { model: 'c', max_tokens: 5, messages: [] } }], t);
    assert.equal(plan.kind, 'direct');
    if (plan.kind !== 'direct') return;
    assert.deepEqual(JSON.parse(plan.request.body!), { requests: [{ custom_id: 'a', params: { model: 'c', max_tokens: 5, messages: [] } }] });
    assert.equal(plan.request.headers['x-api-key'], 'k');
    const done = batch('ended', { succeeded: 1 });
    assert.equal((anthropicBatches.results(done, t) as UpstreamRequest).path, '/messages/batches/msgbatch_1/results');
    assert.deepEqual([done.outputFileId, done.errorFileId], [null, null]);
  });

  test('result lines: a succeeded message\'s usage in the canonical form (cache reads counted as prompt)', () => {
    const ok = anthropicBatches.resultLine({ custom_id: 'a', result: { type: 'succeeded', message: { model: 'claude-x', usage: { input_tokens: 10, output_tokens: 4, cache_read_input_tokens: 6 } } } });
    assert.deepEqual(ok, { ok: true, model: 'claude-x', usage: { prompt_tokens: 16, completion_tokens: 4, total_tokens: 20, prompt_tokens_details: { cached_tokens: 6 } } });
    assert.deepEqual(anthropicBatches.resultLine({ custom_id: 'b', result: { type: 'errored', error: {} } }), { ok: false, model: null, usage: null });
  });
});
