/**
 * Rerank on the OpenAI-compatible hosts: Together, SiliconFlow and vLLM in Cohere's shape, NVIDIA NIM's ranking
 * API with its logits mapped into 0..1; each against a loopback fake of its documented wire.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { compatibleProviderBySlug } from '../../providers/openai-compatible/index.ts';
import { logitOf, rerankThrough, startLoopbackFake, type LoopbackFake } from './rerank-helpers.ts';

const target = (slug: string, baseUrl: string, upstreamModel: string, apiKey?: string): ProviderTarget =>
  ({ slug, baseUrl, ...(apiKey ? { apiKey } : {}), headers: {}, options: {}, upstreamModel });

let fake: LoopbackFake;
before(async () => { fake = await startLoopbackFake(); });
after(() => fake.close());

const DOCS = ['Paris is in France.', 'Berlin is in Germany.', 'The sky is blue.'];

describe('rerank on the OpenAI-compatible catalogue', () => {
  test('together-ai: Cohere-shaped /rerank without documents echoed; usage tokens kept', async () => {
    const together = compatibleProviderBySlug('together-ai');
    assert.ok(together.capabilities.rerank, 'together-ai declares rerank');
    fake.reply(() => ({ body: { id: 'oGs6Zt9', object: 'rerank', model: 'Salesforce/Llama-Rank-V1', results: [{ index: 0, relevance_score: 0.98, document: {} }, { index: 2, relevance_score: 0.01, document: {} }], usage: { prompt_tokens: 80, completion_tokens: 0, total_tokens: 80 } } }));
    const result = await rerankThrough(together, target('together-ai', `${fake.url}/v1`, 'Salesforce/Llama-Rank-V1', 'tg-key'), { model: 'r', query: 'France?', documents: DOCS, top_n: 2 });
    const sent = fake.seen.at(-1)!;
    assert.equal(sent.url, '/v1/rerank');
    assert.equal(sent.headers.authorization, 'Bearer tg-key');
    assert.deepEqual(sent.json, { model: 'Salesforce/Llama-Rank-V1', query: 'France?', documents: DOCS, top_n: 2, return_documents: false });
    assert.deepEqual(result.results, [{ index: 0, relevance_score: 0.98 }, { index: 2, relevance_score: 0.01 }]);
    assert.equal(result.usage?.total_tokens, 80);
    assert.equal(result.meta.billed_units.search_units, 1);
  });

  test('siliconflow: its billed search units are the ones reported', async () => {
    const siliconflow = compatibleProviderBySlug('siliconflow');
    fake.reply(() => ({ body: { id: 'sf-1', results: [{ index: 1, relevance_score: 0.6 }], meta: { billed_units: { input_tokens: 20, output_tokens: 0, search_units: 2, classifications: 0 }, tokens: { input_tokens: 20, output_tokens: 0 } } } }));
    const result = await rerankThrough(siliconflow, target('siliconflow', `${fake.url}/v1`, 'BAAI/bge-reranker-v2-m3', 'sf-key'), { model: 'r', query: 'q', documents: DOCS });
    assert.deepEqual(fake.seen.at(-1)!.json, { model: 'BAAI/bge-reranker-v2-m3', query: 'q', documents: DOCS, return_documents: false });
    assert.equal(result.meta.billed_units.search_units, 2);
    assert.equal(result.usage?.prompt_tokens, 20);
  });

  test('vllm: /rerank without a key when none is configured', async () => {
    const vllm = compatibleProviderBySlug('vllm');
    fake.reply(() => ({ body: { id: 'rerank-1', model: 'BAAI/bge-reranker-base', usage: { total_tokens: 33 }, results: [{ index: 2, document: { text: DOCS[2] }, relevance_score: 0.3 }, { index: 0, document: { text: DOCS[0] }, relevance_score: 0.9 }] } }));
    const result = await rerankThrough(vllm, target('vllm', `${fake.url}/v1`, 'BAAI/bge-reranker-base'), { model: 'r', query: 'q', documents: DOCS, top_n: 2 });
    const sent = fake.seen.at(-1)!;
    assert.equal(sent.url, '/v1/rerank');
    assert.equal(sent.headers.authorization, undefined);
    assert.deepEqual(sent.json, { model: 'BAAI/bge-reranker-base', query: 'q', documents: DOCS, top_n: 2 });
    assert.deepEqual(result.results, [{ index: 2, relevance_score: 0.3 }, { index: 0, relevance_score: 0.9 }]);
  });

  test('nvidia-nim: /ranking with query {text} and passages [{text}]; logits through the logistic function, order kept', async () => {
    const nim = compatibleProviderBySlug('nvidia-nim');
    fake.reply(() => ({ body: { rankings: [{ index: 1, logit: logitOf(0.9) }, { index: 0, logit: -3.2 }, { index: 2, logit: -12.5 }] } }));
    const result = await rerankThrough(nim, target('nvidia-nim', `${fake.url}/v1`, 'nvidia/llama-3.2-nv-rerankqa-1b-v2', 'nvapi-key'), { model: 'r', query: 'which?', documents: DOCS, top_n: 1 });
    const sent = fake.seen.at(-1)!;
    assert.equal(sent.url, '/v1/ranking');
    assert.equal(sent.headers.authorization, 'Bearer nvapi-key');
    assert.deepEqual(sent.json, { model: 'nvidia/llama-3.2-nv-rerankqa-1b-v2', query: { text: 'which?' }, passages: DOCS.map((text) => ({ text })) });
    assert.deepEqual(result.results.map((r) => r.index), [1, 0, 2]);
    assert.ok(Math.abs(result.results[0]!.relevance_score - 0.9) < 1e-9);
    assert.ok(result.results.every((r) => r.relevance_score > 0 && r.relevance_score < 1));
    assert.ok(result.results[1]!.relevance_score > result.results[2]!.relevance_score);
  });

  test('errors through the OpenAI-family mapError; a ranking answer without rankings is malformed', async () => {
    const nim = compatibleProviderBySlug('nvidia-nim');
    fake.reply(() => ({ status: 422, body: { detail: [{ msg: 'passages must not be empty' }] } }));
    await assert.rejects(rerankThrough(nim, target('nvidia-nim', fake.url, 'nvidia/nv-rerankqa-mistral-4b-v3', 'k'), { model: 'r', query: 'q', documents: ['a'] }), (err: GatewayError) =>
      err.code === 'UPSTREAM_BAD_REQUEST' && /passages must not be empty/.test(err.message));
    assert.throws(() => nim.rerank!.fromUpstream({ results: [] }, target('nvidia-nim', fake.url, 'm'), { model: 'r', query: 'q', documents: ['a'] }), (err: GatewayError) => err.code === 'UPSTREAM_ERROR');
    const together = compatibleProviderBySlug('together-ai');
    fake.reply(() => ({ status: 500, body: { error: { message: 'rerank backend down', type: 'server_error' } } }));
    await assert.rejects(rerankThrough(together, target('together-ai', fake.url, 'm', 'k'), { model: 'r', query: 'q', documents: ['a'] }), (err: GatewayError) =>
      err.code === 'UPSTREAM_ERROR' && /rerank backend down/.test(err.message));
  });

  test('only the catalogue rows marked r in PROVIDERS.md declare rerank', async () => {
    const { openAiCompatibleProviders } = await import('../../providers/openai-compatible/index.ts');
    assert.deepEqual(openAiCompatibleProviders.filter((p) => p.capabilities.rerank).map((p) => p.slug).sort(), ['nvidia-nim', 'siliconflow', 'together-ai', 'vllm']);
  });
});
