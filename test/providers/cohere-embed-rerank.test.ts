/** Cohere's /v2/embed and /v2/rerank translators: the request built, the answer read, errors mapped, over a loopback fake. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import cohere from '../../providers/cohere/index.ts';
import { embedThrough, rerankThrough, startLoopbackFake, vectorFor, type LoopbackFake } from './rerank-helpers.ts';

const target = (baseUrl: string, upstreamModel: string, options: Record<string, unknown> = {}): ProviderTarget =>
  ({ slug: 'cohere', baseUrl, apiKey: 'co-key', headers: {}, options, upstreamModel });

let fake: LoopbackFake;
before(async () => { fake = await startLoopbackFake(); });
after(() => fake.close());

/** Cohere's documented embed answer: embeddings by type, billed input tokens in meta. */
const embedAnswer = (texts: string[], tokens = 7) => ({
  id: 'emb-1', texts, response_type: 'embeddings_by_type',
  embeddings: { float: texts.map((t) => vectorFor(t)) },
  meta: { api_version: { version: '2' }, billed_units: { input_tokens: tokens } },
});

describe('cohere embeddings', () => {
  test('a batch: texts, input_type search_document by default, floats asked for, no silent truncation; vectors in order with billed tokens', async () => {
    fake.reply((req) => ({ body: embedAnswer(req.json.texts, 11) }));
    const result = await embedThrough(cohere, target(fake.url, 'embed-english-v3.0'), { model: 'e', input: ['a', 'bb', 'ccc'] });
    const sent = fake.seen.at(-1)!;
    assert.equal(sent.url, '/v2/embed');
    assert.equal(sent.headers.authorization, 'Bearer co-key');
    assert.deepEqual(sent.json, { model: 'embed-english-v3.0', texts: ['a', 'bb', 'ccc'], input_type: 'search_document', embedding_types: ['float'], truncate: 'NONE' });
    assert.deepEqual(result.data.map((d) => d.index), [0, 1, 2]);
    assert.deepEqual(result.data[2]!.embedding, vectorFor('ccc'));
    assert.deepEqual(result.usage, { prompt_tokens: 11, completion_tokens: 0, total_tokens: 11 });
    assert.equal(result.model, 'embed-english-v3.0');
  });

  test('a single string is one text; the input type comes from options.embeddingInputType', async () => {
    fake.reply((req) => ({ body: embedAnswer(req.json.texts) }));
    const result = await embedThrough(cohere, target(fake.url, 'embed-v4.0', { embeddingInputType: 'search_query' }), { model: 'e', input: 'hello' });
    assert.deepEqual(fake.seen.at(-1)!.json.texts, ['hello']);
    assert.equal(fake.seen.at(-1)!.json.input_type, 'search_query');
    assert.equal(result.data.length, 1);
  });

  test('dimensions: embed-v4 only, as output_dimension, and only the sizes it has', async () => {
    const e = cohere.embeddings!;
    assert.equal(e.supportsDimensions('embed-v4.0'), true);
    assert.equal(e.supportsDimensions('embed-english-v3.0'), false);
    const built = JSON.parse(e.toUpstream({ model: 'e', input: 'x', dimensions: 512 }, target(fake.url, 'embed-v4.0')).body!);
    assert.equal(built.output_dimension, 512);
    assert.throws(() => e.toUpstream({ model: 'e', input: 'x', dimensions: 300 }, target(fake.url, 'embed-v4.0')), (err: GatewayError) =>
      err.code === 'VALIDATION_ERROR' && err.status === 400 && /256, 512, 1024, 1536/.test(err.message));
  });

  test('an answer with fewer vectors than inputs, or none, is a malformed answer (502)', () => {
    const e = cohere.embeddings!;
    const t = target(fake.url, 'embed-v4.0');
    assert.throws(() => e.fromUpstream(embedAnswer(['a']), t, { model: 'e', input: ['a', 'b'] }), (err: GatewayError) => err.code === 'UPSTREAM_ERROR' && /1 vectors for 2 inputs/.test(err.message));
    assert.throws(() => e.fromUpstream({ embeddings: { int8: [[1]] } }, t, { model: 'e', input: 'a' }), (err: GatewayError) => err.code === 'UPSTREAM_ERROR');
    assert.throws(() => e.fromUpstream({ embeddings: { float: [['x']] } }, t, { model: 'e', input: 'a' }), (err: GatewayError) => err.code === 'UPSTREAM_ERROR');
  });

  test('upstream errors go through mapError: 400 with the message, 498 as a refused credential, 429 rate limited', async () => {
    const t = target(fake.url, 'embed-v4.0');
    for (const [status, code, httpStatus] of [[400, 'UPSTREAM_BAD_REQUEST', 400], [498, 'UPSTREAM_ERROR', 502], [429, 'UPSTREAM_RATE_LIMITED', 429], [500, 'UPSTREAM_ERROR', 502]] as const) {
      fake.reply(() => ({ status, body: { id: 'x', message: `no good ${status}` } }));
      await assert.rejects(embedThrough(cohere, t, { model: 'e', input: 'a' }), (err: GatewayError) =>
        err.code === code && err.status === httpStatus && err.message.includes(`no good ${status}`));
    }
  });
});

describe('cohere rerank', () => {
  test('query, documents, top_n to /v2/rerank; scores by index, billed search units from meta', async () => {
    fake.reply(() => ({ body: { id: 'r1', results: [{ index: 1, relevance_score: 0.9 }, { index: 0, relevance_score: 0.2 }], meta: { billed_units: { search_units: 3 } } } }));
    const result = await rerankThrough(cohere, target(fake.url, 'rerank-v3.5'), { model: 'r', query: 'q', documents: ['d0', 'd1', 'd2'], top_n: 2 });
    const sent = fake.seen.at(-1)!;
    assert.equal(sent.url, '/v2/rerank');
    assert.equal(sent.headers.authorization, 'Bearer co-key');
    assert.deepEqual(sent.json, { model: 'rerank-v3.5', query: 'q', documents: ['d0', 'd1', 'd2'], top_n: 2 });
    assert.deepEqual(result.results, [{ index: 1, relevance_score: 0.9 }, { index: 0, relevance_score: 0.2 }]);
    assert.deepEqual(result.meta, { billed_units: { search_units: 3 } });
  });

  test('without billed units, one search unit per 100 documents (rounded up)', () => {
    const r = cohere.rerank!;
    const t = target(fake.url, 'rerank-v3.5');
    const docs = Array.from({ length: 250 }, (_, i) => `d${i}`);
    const result = r.fromUpstream({ results: [{ index: 249, relevance_score: 0.5 }] }, t, { model: 'r', query: 'q', documents: docs });
    assert.equal(result.meta.billed_units.search_units, 3);
    assert.equal(r.fromUpstream({ results: [] }, t, { model: 'r', query: 'q', documents: ['a'] }).meta.billed_units.search_units, 1);
  });

  test('an index outside the documents, a repeated index, a score outside 0..1 or no results list: malformed (502)', () => {
    const r = cohere.rerank!;
    const t = target(fake.url, 'rerank-v3.5');
    const req = { model: 'r', query: 'q', documents: ['a', 'b'] };
    for (const body of [
      { results: [{ index: 2, relevance_score: 0.5 }] },
      { results: [{ index: 0, relevance_score: 0.5 }, { index: 0, relevance_score: 0.4 }] },
      { results: [{ index: 0, relevance_score: 1.5 }] },
      { results: [{ index: 0, relevance_score: 'high' }] },
      { message: 'ok?' },
    ]) assert.throws(() => r.fromUpstream(body, t, req), (err: GatewayError) => err.code === 'UPSTREAM_ERROR' && err.status === 502, JSON.stringify(body));
  });

  test('a rerank error answer keeps Cohere\'s message', async () => {
    fake.reply(() => ({ status: 422, body: { id: 'x', message: 'documents must not be empty' } }));
    await assert.rejects(rerankThrough(cohere, target(fake.url, 'rerank-v3.5'), { model: 'r', query: 'q', documents: ['a'] }), (err: GatewayError) =>
      err.code === 'UPSTREAM_BAD_REQUEST' && /documents must not be empty/.test(err.message));
  });
});
