/** Voyage AI and Jina AI: embeddings and rerank translators against loopback fakes of their documented wires. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { base64ToVector, vectorToBase64 } from '../../core/canonical/embeddings.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import jina from '../../providers/jina/index.ts';
import voyage from '../../providers/voyage/index.ts';
import { embedThrough, rerankThrough, startLoopbackFake, vectorFor, type LoopbackFake } from './rerank-helpers.ts';

const target = (slug: string, baseUrl: string, upstreamModel: string, options: Record<string, unknown> = {}): ProviderTarget =>
  ({ slug, baseUrl, apiKey: `${slug}-key`, headers: {}, options, upstreamModel });

let fake: LoopbackFake;
before(async () => { fake = await startLoopbackFake(); });
after(() => fake.close());

/** The OpenAI-shaped answer both send, here in reverse order to prove `index` is what places a vector. */
function listAnswer(inputs: string[], base64: boolean, usage: Record<string, number>) {
  const data = inputs.map((text, index) => ({ object: 'embedding', index, embedding: base64 ? vectorToBase64(vectorFor(text)) : vectorFor(text) }));
  return { object: 'list', data: data.reverse(), model: 'm', usage };
}
const inputsOf = (json: { input: string | string[] }) => (typeof json.input === 'string' ? [json.input] : json.input);

describe('voyage', () => {
  test('embeddings: input and model as given, no truncation, base64 asked for when the caller wants it; vectors back in input order', async () => {
    fake.reply((req) => ({ body: listAnswer(inputsOf(req.json), req.json.encoding_format === 'base64', { total_tokens: 6 }) }));
    const t = target('voyage', `${fake.url}/v1`, 'voyage-3.5', { inputType: 'document' });
    const result = await embedThrough(voyage, t, { model: 'v', input: ['one', 'three'], encoding_format: 'base64' });
    const sent = fake.seen.at(-1)!;
    assert.equal(sent.url, '/v1/embeddings');
    assert.equal(sent.headers.authorization, 'Bearer voyage-key');
    assert.deepEqual(sent.json, { model: 'voyage-3.5', input: ['one', 'three'], truncation: false, input_type: 'document', encoding_format: 'base64' });
    assert.deepEqual(result.data.map((d) => base64ToVector(d.embedding as string)), [vectorFor('one'), vectorFor('three')]);
    assert.deepEqual(result.usage, { prompt_tokens: 6, completion_tokens: 0, total_tokens: 6 });

    const floats = await embedThrough(voyage, target('voyage', `${fake.url}/v1`, 'voyage-3.5'), { model: 'v', input: 'solo' });
    assert.deepEqual(fake.seen.at(-1)!.json, { model: 'voyage-3.5', input: 'solo', truncation: false });
    assert.deepEqual(floats.data, [{ object: 'embedding', index: 0, embedding: vectorFor('solo') }]);
  });

  test('dimensions: output_dimension on the Matryoshka models, within 256/512/1024/2048', () => {
    const e = voyage.embeddings!;
    for (const m of ['voyage-3.5', 'voyage-3.5-lite', 'voyage-3-large', 'voyage-code-3', 'voyage-4-lite']) assert.equal(e.supportsDimensions(m), true, m);
    for (const m of ['voyage-3', 'voyage-law-2', 'voyage-multilingual-2']) assert.equal(e.supportsDimensions(m), false, m);
    const t = target('voyage', fake.url, 'voyage-3-large');
    assert.equal(JSON.parse(e.toUpstream({ model: 'v', input: 'x', dimensions: 2048 }, t).body!).output_dimension, 2048);
    assert.throws(() => e.toUpstream({ model: 'v', input: 'x', dimensions: 1536 }, t), (err: GatewayError) => err.code === 'VALIDATION_ERROR');
  });

  test('rerank: top_n is top_k, no documents asked back; scores from `data`, tokens as usage, search units by the 100-document rule', async () => {
    fake.reply(() => ({ body: { object: 'list', data: [{ index: 2, relevance_score: 0.71 }, { index: 0, relevance_score: 0.12 }], model: 'rerank-2.5', usage: { total_tokens: 40 } } }));
    const result = await rerankThrough(voyage, target('voyage', `${fake.url}/v1`, 'rerank-2.5'), { model: 'r', query: 'q', documents: ['a', 'b', 'c'], top_n: 2 });
    assert.equal(fake.seen.at(-1)!.url, '/v1/rerank');
    assert.deepEqual(fake.seen.at(-1)!.json, { model: 'rerank-2.5', query: 'q', documents: ['a', 'b', 'c'], return_documents: false, top_k: 2 });
    assert.deepEqual(result.results, [{ index: 2, relevance_score: 0.71 }, { index: 0, relevance_score: 0.12 }]);
    assert.equal(result.meta.billed_units.search_units, 1);
    assert.deepEqual(result.usage, { prompt_tokens: 40, completion_tokens: 0, total_tokens: 40 });
  });

  test('errors: Voyage\'s {detail} message through mapError', async () => {
    fake.reply(() => ({ status: 400, body: { detail: 'Value error, output_dimension is not supported' } }));
    await assert.rejects(embedThrough(voyage, target('voyage', fake.url, 'voyage-3.5'), { model: 'v', input: 'x' }), (err: GatewayError) =>
      err.code === 'UPSTREAM_BAD_REQUEST' && /output_dimension is not supported/.test(err.message));
    fake.reply(() => ({ status: 401, body: { detail: 'Provided API key is invalid.' } }));
    await assert.rejects(rerankThrough(voyage, target('voyage', fake.url, 'rerank-2.5'), { model: 'r', query: 'q', documents: ['a'] }), (err: GatewayError) =>
      err.code === 'UPSTREAM_ERROR' && err.status === 502 && /refused the gateway's credential/.test(err.message));
  });

  test('a batch answer with a missing or repeated index is malformed', () => {
    const e = voyage.embeddings!;
    const t = target('voyage', fake.url, 'voyage-3.5');
    const req = { model: 'v', input: ['a', 'b'] };
    assert.throws(() => e.fromUpstream({ data: [{ index: 0, embedding: [1] }, { index: 0, embedding: [2] }] }, t, req), (err: GatewayError) => err.code === 'UPSTREAM_ERROR');
    assert.throws(() => e.fromUpstream({ data: [{ index: 0, embedding: [1] }] }, t, req), (err: GatewayError) => err.code === 'UPSTREAM_ERROR');
    assert.throws(() => e.fromUpstream({ data: [{ index: 0, embedding: 'not base64!' }, { index: 1, embedding: [1] }] }, t, req), (err: GatewayError) => err.code === 'UPSTREAM_ERROR');
  });
});

describe('jina', () => {
  test('embeddings: floats asked for, the task from options, dimensions passed on v3; prompt tokens as usage', async () => {
    fake.reply((req) => ({ body: listAnswer(inputsOf(req.json), false, { total_tokens: 9, prompt_tokens: 9 }) }));
    const t = target('jina', `${fake.url}/v1`, 'jina-embeddings-v3', { task: 'retrieval.passage' });
    const result = await embedThrough(jina, t, { model: 'j', input: ['x', 'yy'], dimensions: 256 });
    const sent = fake.seen.at(-1)!;
    assert.equal(sent.url, '/v1/embeddings');
    assert.equal(sent.headers.authorization, 'Bearer jina-key');
    assert.deepEqual(sent.json, { model: 'jina-embeddings-v3', input: ['x', 'yy'], embedding_type: 'float', task: 'retrieval.passage', dimensions: 256 });
    assert.deepEqual(result.data.map((d) => d.embedding), [vectorFor('x'), vectorFor('yy')]);
    assert.equal(result.usage?.prompt_tokens, 9);
  });

  test('dimensions only on the Matryoshka models', () => {
    const e = jina.embeddings!;
    for (const m of ['jina-embeddings-v3', 'jina-embeddings-v4', 'jina-clip-v2']) assert.equal(e.supportsDimensions(m), true, m);
    for (const m of ['jina-embeddings-v2-base-en', 'jina-clip-v1']) assert.equal(e.supportsDimensions(m), false, m);
  });

  test('rerank: Cohere-shaped with return_documents false; documents Jina sends anyway are not kept', async () => {
    fake.reply(() => ({ body: { model: 'jina-reranker-v2-base-multilingual', usage: { total_tokens: 15 }, results: [{ index: 1, relevance_score: 0.8, document: { text: 'b' } }, { index: 0, relevance_score: 0.05, document: { text: 'a' } }] } }));
    const result = await rerankThrough(jina, target('jina', `${fake.url}/v1`, 'jina-reranker-v2-base-multilingual'), { model: 'r', query: 'q', documents: ['a', 'b'] });
    assert.equal(fake.seen.at(-1)!.url, '/v1/rerank');
    assert.deepEqual(fake.seen.at(-1)!.json, { model: 'jina-reranker-v2-base-multilingual', query: 'q', documents: ['a', 'b'], return_documents: false });
    assert.deepEqual(result.results, [{ index: 1, relevance_score: 0.8 }, { index: 0, relevance_score: 0.05 }]);
    assert.equal(result.usage?.total_tokens, 15);
    assert.equal(result.meta.billed_units.search_units, 1);
  });

  test('errors: 429 is rate limited, 500 an upstream error, both with Jina\'s detail', async () => {
    for (const [status, code] of [[429, 'UPSTREAM_RATE_LIMITED'], [500, 'UPSTREAM_ERROR']] as const) {
      fake.reply(() => ({ status, body: { detail: `jina says ${status}` } }));
      await assert.rejects(rerankThrough(jina, target('jina', fake.url, 'jina-reranker-m0'), { model: 'r', query: 'q', documents: ['a'] }), (err: GatewayError) =>
        err.code === code && err.message.includes(`jina says ${status}`));
    }
  });
});
