/**
 * Vertex AI embeddings: the text embedding models' :predict request, its caps (250 inputs, one for
 * gemini-embedding-*), outputDimensionality, autoTruncate off unless configured, usage from token_count, and
 * errors; as units and against a loopback fake that also serves the service-account token exchange.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, verify } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type OpenAI from 'openai';
import type { EmbeddingsRequest } from '../../core/canonical/embeddings.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import vertexAi from '../../providers/vertex-ai/index.ts';
import { callDirect, fakeVector, startEmbeddingsFake, startEmbeddingsGateway, wordCount, type EmbeddingsFake } from '../conformance/wires/embeddings-fake.ts';
import { vertexEmbeddingsWire } from '../conformance/wires/google-embeddings.ts';
import type { TestGateway } from '../helpers/gateway.ts';
import { clientFailure, gatewayError, gatewayRejection } from '../helpers/failures.ts';

const embeddings = vertexAi.embeddings!;
const BASE = 'https://us-central1-aiplatform.googleapis.com/v1/projects/p1/locations/us-central1';
const target = (upstreamModel = 'text-embedding-005', extra: Partial<ProviderTarget> = {}): ProviderTarget => ({
  slug: 'vertex-ai', baseUrl: BASE, apiKey: 'ya29.static', headers: {}, options: {}, upstreamModel, ...extra,
});
const req = (fields: Partial<EmbeddingsRequest> = {}): EmbeddingsRequest => ({ model: 'embed', input: 'hello', ...fields });
const sent = (request: EmbeddingsRequest, t = target()) => JSON.parse(embeddings.toUpstream(request, t).body!);
const inputs = (n: number) => Array.from({ length: n }, (_, i) => `text ${i}`);

describe('vertex-ai embeddings: the request', () => {
  test('declared: capabilities.embeddings and a translator', () => {
    assert.deepEqual(vertexAi.capabilities.embeddings, {});
  });

  test('predict on the publisher model, instances in order, autoTruncate off: a long input is refused, not cut', () => {
    const built = embeddings.toUpstream(req({ input: ['a', 'b'] }), target());
    assert.equal(built.method, 'POST');
    assert.equal(built.path, '/publishers/google/models/text-embedding-005:predict');
    assert.equal(built.headers['content-type'], 'application/json');
    assert.equal(built.headers.authorization, undefined, 'the token is authorize\'s');
    assert.deepEqual(JSON.parse(built.body!), { instances: [{ content: 'a' }, { content: 'b' }], parameters: { autoTruncate: false } });
  });

  test('dimensions, task type and autoTruncate from options', () => {
    const body = sent(req({ dimensions: 256 }), target('gemini-embedding-001', { options: { embeddingTaskType: 'RETRIEVAL_DOCUMENT', embeddingAutoTruncate: true } }));
    assert.deepEqual(body, { instances: [{ content: 'hello', task_type: 'RETRIEVAL_DOCUMENT' }], parameters: { autoTruncate: true, outputDimensionality: 256 } });
  });

  test('a versioned model and the global location resolve as chat does', () => {
    assert.equal(embeddings.toUpstream(req(), target('textembedding-gecko@003')).path, '/publishers/google/models/textembedding-gecko@003:predict');
    const global = embeddings.toUpstream(req(), target('text-embedding-005', { baseUrl: 'https://global-aiplatform.googleapis.com/v1/projects/p1/locations/global' }));
    assert.equal(global.path, 'https://aiplatform.googleapis.com/v1/projects/p1/locations/global/publishers/google/models/text-embedding-005:predict');
  });

  test('supportsDimensions: the 2024 models and gemini-embedding-*; not the gecko models', () => {
    for (const model of ['text-embedding-004', 'text-embedding-005', 'text-multilingual-embedding-002', 'gemini-embedding-001']) assert.equal(embeddings.supportsDimensions(model), true, model);
    for (const model of ['textembedding-gecko@003', 'textembedding-gecko-multilingual@001', 'claude-sonnet-4-5']) assert.equal(embeddings.supportsDimensions(model), false, model);
  });

  test('dimensions past the model\'s 768: 400 VALIDATION_ERROR', () => {
    const err = gatewayError(() => embeddings.toUpstream(req({ dimensions: 1024 }), target('text-embedding-005')));
    assert.equal(err.code, 'VALIDATION_ERROR');
    assert.deepEqual(err.details, [{ path: '/dimensions', message: 'must be at most 768 for text-embedding-005' }]);
  });

  test('batch caps: 250 inputs, one for gemini-embedding-*; past them 400 CAPABILITY_NOT_SUPPORTED naming the cap', () => {
    assert.equal(sent(req({ input: inputs(250) })).instances.length, 250);
    const over = gatewayError(() => embeddings.toUpstream(req({ input: inputs(251) }), target()));
    assert.equal(over.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.match(over.message, /at most 250 inputs per request with text-embedding-005 \(got 251\)/);
    assert.deepEqual(over.details, { provider: 'vertex-ai', capability: 'embeddings', maxInputs: 250 });
    const gem = gatewayError(() => embeddings.toUpstream(req({ input: ['a', 'b'] }), target('gemini-embedding-001')));
    assert.equal(gem.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.match(gem.message, /at most 1 input per request/);
    assert.equal(sent(req({ input: ['only'] }), target('gemini-embedding-001')).instances.length, 1);
  });

  test('Claude models have no embeddings: 400 CAPABILITY_NOT_SUPPORTED', () => {
    const err = gatewayError(() => embeddings.toUpstream(req(), target('claude-sonnet-4-5@20250929')));
    assert.equal(err.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.deepEqual(err.details, { provider: 'vertex-ai', capability: 'embeddings' });
  });
});

describe('vertex-ai embeddings: the answer', () => {
  const prediction = (values: number[], tokens?: number) => ({ embeddings: { values, statistics: { ...(tokens === undefined ? {} : { token_count: tokens }), truncated: false } } });

  test('vectors in order; usage is the sum of the token counts', () => {
    const result = embeddings.fromUpstream({ predictions: [prediction([1, 2], 3), prediction([3, 4], 5)] }, target(), req({ input: ['a', 'b'] }));
    assert.deepEqual(result.data, [{ object: 'embedding', embedding: [1, 2], index: 0 }, { object: 'embedding', embedding: [3, 4], index: 1 }]);
    assert.equal(result.model, 'text-embedding-005');
    assert.deepEqual(result.usage, { prompt_tokens: 8, completion_tokens: 0, total_tokens: 8 });
  });

  test('a prediction without a token count: usage left to the gateway\'s estimate', () => {
    const result = embeddings.fromUpstream({ predictions: [prediction([1], 3), prediction([2])] }, target(), req({ input: ['a', 'b'] }));
    assert.equal(result.usage, undefined);
  });

  test('a count that differs from the inputs or a vector that is not numbers: 502 UPSTREAM_ERROR', () => {
    for (const body of [{ predictions: [prediction([1], 1)] }, { predictions: [{ embeddings: {} }, prediction([1], 1)] }, { predictions: 'x' }, {}]) {
      assert.equal(gatewayError(() => embeddings.fromUpstream(body, target(), req({ input: ['a', 'b'] }))).code, 'UPSTREAM_ERROR');
    }
  });
});

describe('vertex-ai embeddings against a loopback fake, with a service-account token', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const TOKEN = 'ya29.vertex-embeddings-token';
  let fake: EmbeddingsFake;
  let exchanges = 0;
  const live = (model = 'text-embedding-005'): ProviderTarget => ({
    slug: 'vertex-ai', headers: {}, upstreamModel: model,
    baseUrl: `${fake.url}/v1/projects/p1/locations/us-central1`,
    options: { serviceAccountKey: { client_email: 'gw@p1.iam.gserviceaccount.com', private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }), token_uri: `${fake.url}/token` } },
  });
  before(async () => {
    fake = await startEmbeddingsFake(vertexEmbeddingsWire, (req, res) => {
      if (req.url !== '/token') return false;
      exchanges++;
      const [header, claims, signature] = (new URLSearchParams(req.rawBody).get('assertion') ?? '').split('.');
      assert.ok(verify('sha256', Buffer.from(`${header}.${claims}`), publicKey, Buffer.from(signature!, 'base64url')));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: TOKEN, expires_in: 3599, token_type: 'Bearer' }));
      return true;
    });
  });
  after(() => fake.close());

  test('single and batch with dimensions: the exchanged token on each call, vectors in order, usage counted', async () => {
    fake.mode = { kind: 'answer', length: 6 };
    const one = await callDirect(vertexAi, live(), req({ input: 'one two three' }));
    assert.deepEqual(one.data[0]!.embedding, fakeVector('one two three', 6));
    assert.deepEqual(one.usage, { prompt_tokens: 3, completion_tokens: 0, total_tokens: 3 });
    fake.mode = { kind: 'answer', length: 4 };
    const texts = ['alpha', 'beta gamma', 'delta epsilon zeta'];
    const batch = await callDirect(vertexAi, live(), req({ input: texts, dimensions: 4 }));
    assert.deepEqual(batch.data.map((d) => d.embedding), texts.map((t) => fakeVector(t, 4)));
    const tokens = texts.reduce((n, t) => n + wordCount(t), 0);
    assert.deepEqual(batch.usage, { prompt_tokens: tokens, completion_tokens: 0, total_tokens: tokens });
    assert.deepEqual(vertexEmbeddingsWire.summarize(fake.requests.at(-1)!), { model: 'text-embedding-005', inputs: texts, dimensions: 4 });
    for (const r of fake.requests) vertexEmbeddingsWire.assertAuth!(r, TOKEN);
    assert.ok(exchanges >= 1);
    assert.deepEqual(fake.problems, []);
  });

  test('upstream errors map through the provider\'s mapError', async () => {
    const expected: Record<number, [string, number]> = { 400: ['UPSTREAM_BAD_REQUEST', 400], 403: ['UPSTREAM_ERROR', 502], 429: ['UPSTREAM_RATE_LIMITED', 429], 503: ['UPSTREAM_ERROR', 502] };
    for (const [status, [code, httpStatus]] of Object.entries(expected)) {
      fake.mode = { kind: 'error', status: Number(status), message: 'Input is too long' };
      const err = await gatewayRejection(callDirect(vertexAi, live(), req()));
      assert.equal(err.code, code, `upstream ${status}`);
      assert.equal(err.status, httpStatus);
      assert.equal((err.details as { upstreamStatus: number }).upstreamStatus, Number(status));
    }
  });
});

describe('vertex-ai embeddings through the gateway, called with the openai client (service account)', () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const TOKEN = 'ya29.vertex-gateway-token';
  let fake: EmbeddingsFake;
  let gw: TestGateway;
  let client: OpenAI;
  before(async () => {
    fake = await startEmbeddingsFake(vertexEmbeddingsWire, (req, res) => {
      if (req.url !== '/token') return false;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: TOKEN, expires_in: 3599, token_type: 'Bearer' }));
      return true;
    });
    const keyFile = JSON.stringify({ client_email: 'gw@p1.iam.gserviceaccount.com', private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }), token_uri: `${fake.url}/token` });
    ({ gw, client } = await startEmbeddingsGateway(`
providers:
  vertex-ai:
    baseUrl: ${fake.url}/v1/projects/p1/locations/us-central1
    options:
      serviceAccountKey: \${GOOGLE_SA_KEY}
models:
  - { id: vtx-embed, provider: vertex-ai, upstreamModel: text-embedding-005 }
  - { id: vtx-gemini-embed, provider: vertex-ai, upstreamModel: gemini-embedding-001 }
  - { id: gecko, provider: vertex-ai, upstreamModel: "textembedding-gecko@003" }
`, { GOOGLE_SA_KEY: keyFile }));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('a batch with dimensions: the exchanged token, order kept, usage from token_count, floats and base64', async () => {
    fake.mode = { kind: 'answer', length: 4 };
    const texts = ['one', 'two words', 'three more words'];
    const { data, response } = await client.embeddings.create({ model: 'vtx-embed', input: texts, dimensions: 4, encoding_format: 'float' }).withResponse();
    assert.equal(response.headers.get('x-provider'), 'vertex-ai');
    assert.equal(response.headers.get('x-model'), 'text-embedding-005');
    assert.deepEqual(data.data.map((d) => [d.index, d.embedding]), texts.map((t, i) => [i, fakeVector(t, 4)]));
    assert.deepEqual(data.usage, { prompt_tokens: 6, total_tokens: 6 });
    vertexEmbeddingsWire.assertAuth!(fake.requests.at(-1)!, TOKEN);
    assert.deepEqual(fake.requests.at(-1)!.json.parameters, { autoTruncate: false, outputDimensionality: 4 });
    const decoded = await client.embeddings.create({ model: 'vtx-embed', input: texts, dimensions: 4 });
    assert.deepEqual(decoded.data.map((d) => d.embedding), texts.map((t) => fakeVector(t, 4)));
  });

  test('gemini-embedding-001 takes one input: single works, a batch is 400 CAPABILITY_NOT_SUPPORTED before any I/O', async () => {
    fake.mode = { kind: 'answer', length: 8 };
    const one = await client.embeddings.create({ model: 'vtx-gemini-embed', input: 'just one', encoding_format: 'float' });
    assert.deepEqual(one.data[0]!.embedding, fakeVector('just one', 8));
    const before = fake.requests.length;
    const err = await clientFailure(client.embeddings.create({ model: 'vtx-gemini-embed', input: ['a', 'b'] }));
    assert.equal(err.status, 400);
    assert.equal(err.error?.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.deepEqual(err.error?.details, { provider: 'vertex-ai', capability: 'embeddings', maxInputs: 1 });
    const gecko = await clientFailure(client.embeddings.create({ model: 'gecko', input: 'a', dimensions: 8 }));
    assert.equal(gecko.error?.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.equal(fake.requests.length, before, 'the upstream was not called');
  });

  test('an upstream RESOURCE_EXHAUSTED: 429 UPSTREAM_RATE_LIMITED', async () => {
    fake.mode = { kind: 'error', status: 429, message: 'Quota exceeded' };
    const err = await clientFailure(client.embeddings.create({ model: 'vtx-embed', input: 'x' }));
    assert.equal(err.status, 429);
    assert.equal(err.error?.code, 'UPSTREAM_RATE_LIMITED');
  });
});
