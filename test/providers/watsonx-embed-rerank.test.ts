/** watsonx.ai /text/embeddings and /text/rerank: the request built, the answer read, errors mapped, over a loopback fake. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ProviderIO, ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { DEFAULT_VERSION } from '../../providers/watsonx/chat.ts';
import watsonx from '../../providers/watsonx/index.ts';
import { embedThrough, logitOf, rerankThrough, startLoopbackFake, vectorFor, type LoopbackFake } from './rerank-helpers.ts';

/** The IAM exchange itself is tested in watsonx.test.ts; here the cached token is handed over as it would be. */
const io: ProviderIO = { fetchJson: () => Promise.reject(new Error('unused')), cached: async () => 'iam-token-1', now: () => Date.now() };

const target = (baseUrl: string, upstreamModel: string, options: Record<string, unknown> = { projectId: 'proj-1' }): ProviderTarget =>
  ({ slug: 'watsonx', baseUrl, apiKey: 'ibm-key', headers: {}, options, upstreamModel });

let fake: LoopbackFake;
before(async () => { fake = await startLoopbackFake(); });
after(() => fake.close());

describe('watsonx embeddings', () => {
  test('inputs, model_id and project_id to /text/embeddings?version=, the IAM token as bearer; vectors in order, input_token_count as usage', async () => {
    fake.reply((req) => ({ body: { model_id: req.json.model_id, results: req.json.inputs.map((t: string) => ({ embedding: vectorFor(t) })), created_at: '2025-01-01T00:00:00Z', input_token_count: 12 } }));
    const result = await embedThrough(watsonx, target(`${fake.url}/ml/v1`, 'ibm/slate-125m-english-rtrvr-v2'), { model: 'w', input: ['a', 'bcd'] }, io);
    const sent = fake.seen.at(-1)!;
    assert.equal(sent.url, `/ml/v1/text/embeddings?version=${DEFAULT_VERSION}`);
    assert.equal(sent.headers.authorization, 'Bearer iam-token-1');
    assert.deepEqual(sent.json, { model_id: 'ibm/slate-125m-english-rtrvr-v2', inputs: ['a', 'bcd'], parameters: { return_options: { input_text: false } }, project_id: 'proj-1' });
    assert.deepEqual(result.data.map((d) => d.embedding), [vectorFor('a'), vectorFor('bcd')]);
    assert.deepEqual(result.usage, { prompt_tokens: 12, completion_tokens: 0, total_tokens: 12 });
  });

  test('a space instead of a project, and the configured version; no model takes dimensions', () => {
    const built = watsonx.embeddings!.toUpstream({ model: 'w', input: 'x' }, target('http://h/ml/v1', 'ibm/granite-embedding-278m-multilingual', { spaceId: 'space-9', version: '2024-05-01' }));
    assert.equal(built.path, '/text/embeddings?version=2024-05-01');
    const body = JSON.parse(built.body!);
    assert.equal(body.space_id, 'space-9');
    assert.equal(body.project_id, undefined);
    assert.deepEqual(body.inputs, ['x']);
    assert.equal(watsonx.embeddings!.supportsDimensions('ibm/granite-embedding-278m-multilingual'), false);
  });

  test('errors: watsonx\'s {errors: [{code, message}]} through mapError', async () => {
    fake.reply(() => ({ status: 400, body: { errors: [{ code: 'invalid_input_argument', message: 'Token sequence length exceeds the maximum' }], trace: 't', status_code: 400 } }));
    await assert.rejects(embedThrough(watsonx, target(fake.url, 'ibm/slate-30m-english-rtrvr'), { model: 'w', input: 'x' }, io), (err: GatewayError) =>
      err.code === 'UPSTREAM_BAD_REQUEST' && /exceeds the maximum/.test(err.message));
  });
});

describe('watsonx rerank', () => {
  test('query and inputs [{text}] with return_options top_n; logits mapped into 0..1 in their order', async () => {
    fake.reply(() => ({ body: { model_id: 'cross-encoder/ms-marco-minilm-l-12-v2', results: [{ index: 1, score: logitOf(0.95) }, { index: 0, score: logitOf(0.2) }], input_token_count: 30 } }));
    const result = await rerankThrough(watsonx, target(`${fake.url}/ml/v1`, 'cross-encoder/ms-marco-minilm-l-12-v2'), { model: 'r', query: 'q', documents: ['a', 'b'], top_n: 2 }, io);
    const sent = fake.seen.at(-1)!;
    assert.equal(sent.url, `/ml/v1/text/rerank?version=${DEFAULT_VERSION}`);
    assert.equal(sent.headers.authorization, 'Bearer iam-token-1');
    assert.deepEqual(sent.json, {
      model_id: 'cross-encoder/ms-marco-minilm-l-12-v2', query: 'q', inputs: [{ text: 'a' }, { text: 'b' }],
      parameters: { return_options: { inputs: false, query: false, top_n: 2 } }, project_id: 'proj-1',
    });
    assert.deepEqual(result.results.map((r) => r.index), [1, 0]);
    assert.ok(Math.abs(result.results[0]!.relevance_score - 0.95) < 1e-9);
    assert.ok(Math.abs(result.results[1]!.relevance_score - 0.2) < 1e-9);
    assert.equal(result.meta.billed_units.search_units, 1);
    assert.equal(result.usage?.prompt_tokens, 30);
  });

  test('negative and large logits stay within 0..1; an answer without results is malformed', () => {
    const r = watsonx.rerank!;
    const t = target('http://h', 'cross-encoder/ms-marco-minilm-l-12-v2');
    const req = { model: 'r', query: 'q', documents: ['a', 'b'] };
    const out = r.fromUpstream({ results: [{ index: 0, score: -40 }, { index: 1, score: 40 }] }, t, req);
    for (const s of out.results) assert.ok(s.relevance_score >= 0 && s.relevance_score <= 1);
    assert.throws(() => r.fromUpstream({ errors: [] }, t, req), (err: GatewayError) => err.code === 'UPSTREAM_ERROR');
  });
});
