/**
 * Rerank on the clouds: Vertex AI through the Discovery Engine ranking API (its own host, the Vertex OAuth
 * token) and Bedrock through InvokeModel (Cohere Rerank and Amazon Rerank, SigV4 or a Bedrock API key), each
 * against a loopback fake of its documented wire.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import bedrock from '../../providers/bedrock/index.ts';
import vertex from '../../providers/vertex-ai/index.ts';
import { rerankThrough, startLoopbackFake, type LoopbackFake } from './rerank-helpers.ts';

let fake: LoopbackFake;
before(async () => { fake = await startLoopbackFake(); });
after(() => fake.close());

const DOCS = ['alpha', 'beta', 'gamma'];
const many = (n: number) => Array.from({ length: n }, (_, i) => `doc ${i}`);

describe('vertex-ai ranking', () => {
  const target = (options: Record<string, unknown>): ProviderTarget => ({
    slug: 'vertex-ai', baseUrl: 'https://us-central1-aiplatform.googleapis.com/v1/projects/p1/locations/us-central1',
    apiKey: 'ya29.token', headers: {}, options: { project: 'p1', location: 'us-central1', ...options }, upstreamModel: 'semantic-ranker-default@latest',
  });

  test('records with their positions as ids to the project\'s default ranking config; scores by id, a left-out score is 0', async () => {
    fake.reply(() => ({ body: { records: [{ id: '2', score: 0.93 }, { id: '0', score: 0.41 }, { id: '1' }] } }));
    const result = await rerankThrough(vertex, target({ rankingUrl: `${fake.url}/v1` }), { model: 'r', query: 'which letter?', documents: DOCS, top_n: 3 });
    const sent = fake.seen.at(-1)!;
    assert.equal(sent.url, '/v1/projects/p1/locations/global/rankingConfigs/default_ranking_config:rank');
    assert.equal(sent.headers.authorization, 'Bearer ya29.token');
    assert.equal(sent.headers['x-goog-user-project'], 'p1');
    assert.deepEqual(sent.json, {
      model: 'semantic-ranker-default@latest', query: 'which letter?', records: DOCS.map((content, i) => ({ id: String(i), content })), topN: 3, ignoreRecordDetailsInResponse: true,
    });
    assert.deepEqual(result.results, [{ index: 2, relevance_score: 0.93 }, { index: 0, relevance_score: 0.41 }, { index: 1, relevance_score: 0 }]);
    assert.equal(result.meta.billed_units.search_units, 1);
  });

  test('the public ranking host by default; no records at all is an empty ranking', () => {
    const built = vertex.rerank!.toUpstream({ model: 'r', query: 'q', documents: ['a'] }, target({}));
    assert.equal(built.path, 'https://discoveryengine.googleapis.com/v1/projects/p1/locations/global/rankingConfigs/default_ranking_config:rank');
    assert.deepEqual(vertex.rerank!.fromUpstream({}, target({}), { model: 'r', query: 'q', documents: ['a'] }).results, []);
  });

  test('more than 200 records is refused before any I/O; so is a ranking without a project', () => {
    assert.throws(() => vertex.rerank!.toUpstream({ model: 'r', query: 'q', documents: many(201) }, target({})), (err: GatewayError) =>
      err.code === 'CAPABILITY_NOT_SUPPORTED' && err.status === 400 && /at most 200 documents/.test(err.message));
    const noProject = { ...target({}), options: {} };
    assert.throws(() => vertex.rerank!.toUpstream({ model: 'r', query: 'q', documents: ['a'] }, noProject), (err: GatewayError) => err.code === 'UPSTREAM_ERROR' && /options.project/.test(err.message));
  });

  test('Google\'s error envelope through mapError; an unknown record id is malformed', async () => {
    fake.reply(() => ({ status: 403, body: { error: { code: 403, message: 'Discovery Engine API has not been used in project p1', status: 'PERMISSION_DENIED' } } }));
    await assert.rejects(rerankThrough(vertex, target({ rankingUrl: fake.url }), { model: 'r', query: 'q', documents: DOCS }), (err: GatewayError) =>
      err.code === 'UPSTREAM_ERROR' && err.status === 502 && /Discovery Engine API/.test(err.message));
    assert.throws(() => vertex.rerank!.fromUpstream({ records: [{ id: 'x', score: 0.5 }] }, target({}), { model: 'r', query: 'q', documents: DOCS }), (err: GatewayError) => err.code === 'UPSTREAM_ERROR');
  });
});

describe('bedrock rerank', () => {
  const target = (upstreamModel: string, credentials: Partial<ProviderTarget> & { options?: Record<string, unknown> }): ProviderTarget =>
    ({ slug: 'bedrock', baseUrl: fake.url, headers: {}, options: { region: 'us-west-2' }, upstreamModel, ...credentials });

  test('Cohere Rerank through InvokeModel: Cohere\'s body with api_version 2, the model in the path, SigV4-signed', async () => {
    fake.reply(() => ({ body: { id: 'b1', results: [{ index: 1, relevance_score: 0.87 }, { index: 0, relevance_score: 0.03 }] } }));
    const t = target('cohere.rerank-v3-5:0', { options: { region: 'us-west-2', accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' } });
    const result = await rerankThrough(bedrock, t, { model: 'r', query: 'q', documents: DOCS, top_n: 2 });
    const sent = fake.seen.at(-1)!;
    assert.equal(sent.url, '/model/cohere.rerank-v3-5%3A0/invoke');
    assert.match(String(sent.headers.authorization), /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-west-2\/bedrock\/aws4_request/);
    assert.deepEqual(sent.json, { query: 'q', documents: DOCS, top_n: 2, api_version: 2 });
    assert.deepEqual(result.results, [{ index: 1, relevance_score: 0.87 }, { index: 0, relevance_score: 0.03 }]);
    assert.equal(result.meta.billed_units.search_units, 1);
  });

  test('Amazon Rerank: the same body without api_version; a Bedrock API key as bearer; 101 documents are 2 search units', async () => {
    fake.reply(() => ({ body: { results: [{ index: 100, relevance_score: 0.5 }] } }));
    const result = await rerankThrough(bedrock, target('arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0', { apiKey: 'bedrock-api-key' }), { model: 'r', query: 'q', documents: many(101) });
    const sent = fake.seen.at(-1)!;
    assert.equal(sent.url, '/model/arn%3Aaws%3Abedrock%3Aus-west-2%3A%3Afoundation-model%2Famazon.rerank-v1%3A0/invoke');
    assert.equal(sent.headers.authorization, 'Bearer bedrock-api-key');
    assert.deepEqual(Object.keys(sent.json).sort(), ['documents', 'query']);
    assert.equal(result.meta.billed_units.search_units, 2);
  });

  test('a model that is not a reranker, or more than 1,000 documents: 400 CAPABILITY_NOT_SUPPORTED before any I/O', () => {
    const r = bedrock.rerank!;
    assert.throws(() => r.toUpstream({ model: 'r', query: 'q', documents: DOCS }, target('anthropic.claude-3-haiku-20240307-v1:0', { apiKey: 'k' })), (err: GatewayError) =>
      err.code === 'CAPABILITY_NOT_SUPPORTED' && /does not support rerank with anthropic/.test(err.message));
    assert.throws(() => r.toUpstream({ model: 'r', query: 'q', documents: many(1001) }, target('cohere.rerank-v3-5:0', { apiKey: 'k' })), (err: GatewayError) =>
      err.code === 'CAPABILITY_NOT_SUPPORTED' && /at most 1000 documents/.test(err.message));
  });

  test('Bedrock\'s error answer through mapError', async () => {
    fake.reply(() => ({ status: 400, body: { message: 'Malformed input request: #: required key [query] not found' } }));
    await assert.rejects(rerankThrough(bedrock, target('cohere.rerank-v3-5:0', { apiKey: 'k' }), { model: 'r', query: 'q', documents: DOCS }), (err: GatewayError) =>
      err.code === 'UPSTREAM_BAD_REQUEST' && /Malformed input request/.test(err.message));
  });
});
