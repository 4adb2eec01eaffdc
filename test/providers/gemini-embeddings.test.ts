/**
 * Gemini API embeddings: the batchEmbedContents request for one input and for a batch, outputDimensionality where
 * the model takes it, the 100-input cap, the answer read in order, and errors, as units and against a loopback
 * fake of the documented wire.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type OpenAI from 'openai';
import { base64ToVector, type EmbeddingsRequest } from '../../core/canonical/embeddings.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import gemini from '../../providers/gemini/index.ts';
import { callDirect, fakeVector, startEmbeddingsFake, startEmbeddingsGateway, type EmbeddingsFake } from '../conformance/wires/embeddings-fake.ts';
import { geminiEmbeddingsWire } from '../conformance/wires/google-embeddings.ts';
import { postJson, type TestGateway } from '../helpers/gateway.ts';
import { clientFailure, gatewayError, gatewayRejection } from '../helpers/failures.ts';

const embeddings = gemini.embeddings!;
const target = (upstreamModel = 'text-embedding-004', extra: Partial<ProviderTarget> = {}): ProviderTarget => ({
  slug: 'gemini', baseUrl: 'https://generativelanguage.googleapis.com/v1beta', apiKey: 'AIza-test', headers: {}, options: {}, upstreamModel, ...extra,
});
const req = (fields: Partial<EmbeddingsRequest> = {}): EmbeddingsRequest => ({ model: 'embed', input: 'hello', ...fields });
const sent = (request: EmbeddingsRequest, t = target()) => JSON.parse(embeddings.toUpstream(request, t).body!);

describe('gemini embeddings: the request', () => {
  test('declared: capabilities.embeddings and a translator', () => {
    assert.deepEqual(gemini.capabilities.embeddings, {});
    assert.equal(typeof embeddings.toUpstream, 'function');
  });

  test('one input is one batchEmbedContents request with the key header and the model named as a resource', () => {
    const built = embeddings.toUpstream(req(), target());
    assert.equal(built.method, 'POST');
    assert.equal(built.path, '/models/text-embedding-004:batchEmbedContents');
    assert.equal(built.headers['x-goog-api-key'], 'AIza-test');
    assert.equal(built.headers['content-type'], 'application/json');
    assert.equal(built.headers.authorization, undefined);
    assert.deepEqual(JSON.parse(built.body!), { requests: [{ model: 'models/text-embedding-004', content: { parts: [{ text: 'hello' }] } }] });
  });

  test('a batch keeps its order in one call; dimensions become outputDimensionality on every request', () => {
    const body = sent(req({ input: ['a', 'b', 'c'], dimensions: 256 }), target('gemini-embedding-001'));
    assert.deepEqual(body.requests.map((r: any) => r.content.parts[0].text), ['a', 'b', 'c']);
    assert.ok(body.requests.every((r: any) => r.outputDimensionality === 256 && r.model === 'models/gemini-embedding-001'));
  });

  test('a model written as models/... keeps its path; the caller\'s user is not sent', () => {
    const built = embeddings.toUpstream(req({ user: 'u-1' }), target('models/gemini-embedding-001'));
    assert.equal(built.path, '/models/gemini-embedding-001:batchEmbedContents');
    assert.equal(JSON.parse(built.body!).requests[0].model, 'models/gemini-embedding-001');
    assert.doesNotMatch(built.body!, /u-1/);
  });

  test('options.embeddingTaskType goes on every request as taskType', () => {
    const body = sent(req({ input: ['q1', 'q2'] }), target('gemini-embedding-001', { options: { embeddingTaskType: 'RETRIEVAL_QUERY' } }));
    assert.deepEqual(body.requests.map((r: any) => r.taskType), ['RETRIEVAL_QUERY', 'RETRIEVAL_QUERY']);
  });

  test('supportsDimensions: text-embedding-004 and gemini-embedding-*; not embedding-001', () => {
    assert.equal(embeddings.supportsDimensions('text-embedding-004'), true);
    assert.equal(embeddings.supportsDimensions('gemini-embedding-001'), true);
    assert.equal(embeddings.supportsDimensions('models/gemini-embedding-exp-03-07'), true);
    assert.equal(embeddings.supportsDimensions('embedding-001'), false);
    assert.equal(embeddings.supportsDimensions('models/embedding-001'), false);
  });

  test('dimensions past the model\'s full vector: 400 VALIDATION_ERROR naming the bound, never cut', () => {
    const err = gatewayError(() => embeddings.toUpstream(req({ dimensions: 769 }), target('text-embedding-004')));
    assert.equal(err.code, 'VALIDATION_ERROR');
    assert.equal(err.status, 400);
    assert.match(err.message, /at most 768/);
    assert.deepEqual(err.details, [{ path: '/dimensions', message: 'must be at most 768 for text-embedding-004' }]);
    assert.equal(sent(req({ dimensions: 3072 }), target('gemini-embedding-001')).requests[0].outputDimensionality, 3072);
    assert.equal(gatewayError(() => embeddings.toUpstream(req({ dimensions: 3073 }), target('gemini-embedding-001'))).code, 'VALIDATION_ERROR');
  });

  test('more than 100 inputs: 400 CAPABILITY_NOT_SUPPORTED naming the cap, before any I/O', () => {
    assert.equal(sent(req({ input: Array.from({ length: 100 }, (_, i) => `t${i}`) })).requests.length, 100);
    const err = gatewayError(() => embeddings.toUpstream(req({ input: Array.from({ length: 101 }, (_, i) => `t${i}`) }), target()));
    assert.equal(err.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.match(err.message, /at most 100 inputs/);
    assert.deepEqual(err.details, { provider: 'gemini', capability: 'embeddings', maxInputs: 100 });
  });
});

describe('gemini embeddings: the answer', () => {
  test('vectors in request order, the upstream model, no usage (Gemini counts no tokens here)', () => {
    const result = embeddings.fromUpstream({ embeddings: [{ values: [0.1, 0.2] }, { values: [0.3, 0.4] }] }, target(), req({ input: ['a', 'b'] }));
    assert.deepEqual(result, {
      object: 'list',
      data: [{ object: 'embedding', embedding: [0.1, 0.2], index: 0 }, { object: 'embedding', embedding: [0.3, 0.4], index: 1 }],
      model: 'text-embedding-004',
    });
  });

  test('a count that differs from the inputs, or a vector that is not numbers: 502 UPSTREAM_ERROR', () => {
    for (const body of [{ embeddings: [{ values: [1] }] }, { embeddings: [{ values: [1] }, { values: ['x'] }] }, {}, null, { embeddings: [{}, {}] }]) {
      const err = gatewayError(() => embeddings.fromUpstream(body, target(), req({ input: ['a', 'b'] })));
      assert.equal(err.code, 'UPSTREAM_ERROR');
      assert.equal(err.status, 502);
    }
  });
});

describe('gemini embeddings against a loopback fake of batchEmbedContents', () => {
  let fake: EmbeddingsFake;
  const live = (model = 'gemini-embedding-001') => target(model, { baseUrl: `${fake.url}/v1beta`, apiKey: 'AIza-fake' });
  before(async () => {
    fake = await startEmbeddingsFake(geminiEmbeddingsWire);
  });
  after(() => fake.close());

  test('single and batch, with dimensions: one call each, the key header, vectors back in order', async () => {
    fake.mode = { kind: 'answer', length: 8 };
    const one = await callDirect(gemini, live(), req({ input: 'hello' }));
    assert.deepEqual(one.data.map((d) => d.embedding), [fakeVector('hello', 8)]);
    fake.mode = { kind: 'answer', length: 4 };
    const batch = await callDirect(gemini, live(), req({ input: ['first', 'second one', 'third'], dimensions: 4 }));
    assert.deepEqual(batch.data.map((d) => d.embedding), ['first', 'second one', 'third'].map((t) => fakeVector(t, 4)));
    assert.deepEqual(batch.data.map((d) => d.index), [0, 1, 2]);
    assert.equal(batch.usage, undefined);
    assert.equal(fake.requests.length, 2);
    assert.deepEqual(geminiEmbeddingsWire.summarize(fake.requests[1]!), { model: 'gemini-embedding-001', inputs: ['first', 'second one', 'third'], dimensions: 4 });
    for (const r of fake.requests) geminiEmbeddingsWire.assertAuth!(r, 'AIza-fake');
    assert.deepEqual(fake.problems, []);
  });

  test('upstream errors map through the provider\'s mapError: 400, 401, 429, 500', async () => {
    const expected: Record<number, [string, number]> = { 400: ['UPSTREAM_BAD_REQUEST', 400], 401: ['UPSTREAM_ERROR', 502], 429: ['UPSTREAM_RATE_LIMITED', 429], 500: ['UPSTREAM_ERROR', 502] };
    for (const [status, [code, httpStatus]] of Object.entries(expected)) {
      fake.mode = { kind: 'error', status: Number(status), message: 'outputDimensionality is not supported' };
      const err = await gatewayRejection(callDirect(gemini, live('embedding-001'), req()));
      assert.equal(err.code, code);
      assert.equal(err.status, httpStatus);
      assert.match(err.message, /outputDimensionality is not supported|credential/);
      assert.equal((err.details as { provider: string }).provider, 'gemini');
    }
  });
});

describe('gemini embeddings through the gateway, called with the openai client', () => {
  let fake: EmbeddingsFake;
  let gw: TestGateway;
  let client: OpenAI;
  let key: string;
  before(async () => {
    fake = await startEmbeddingsFake(geminiEmbeddingsWire);
    ({ gw, key, client } = await startEmbeddingsGateway(`
providers:
  gemini:
    baseUrl: ${fake.url}/v1beta
    apiKey: AIza-gateway-key
    options:
      embeddingTaskType: RETRIEVAL_DOCUMENT
models:
  - { id: gem-embed, provider: gemini, upstreamModel: gemini-embedding-001 }
  - { id: old-embed, provider: gemini, upstreamModel: embedding-001 }
`));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('one input as floats: the key header, the task type, X-Provider and X-Model, usage estimated', async () => {
    fake.mode = { kind: 'answer', length: 8 };
    const { data, response } = await client.embeddings.create({ model: 'gem-embed', input: 'hello there', encoding_format: 'float' }).withResponse();
    assert.equal(response.headers.get('x-provider'), 'gemini');
    assert.equal(response.headers.get('x-model'), 'gemini-embedding-001');
    assert.deepEqual(data.data, [{ object: 'embedding', embedding: fakeVector('hello there', 8), index: 0 }]);
    assert.ok(data.usage.prompt_tokens > 0, 'the gateway estimates what Gemini does not count');
    geminiEmbeddingsWire.assertAuth!(fake.requests.at(-1)!, 'AIza-gateway-key');
    assert.equal(fake.requests.at(-1)!.json.requests[0].taskType, 'RETRIEVAL_DOCUMENT');
  });

  test('a batch with dimensions, in order, as the client\'s default base64 and as base64 on the wire', async () => {
    fake.mode = { kind: 'answer', length: 4 };
    const texts = ['alpha', 'beta', 'gamma', 'delta'];
    const decoded = await client.embeddings.create({ model: 'gem-embed', input: texts, dimensions: 4 });
    assert.deepEqual(decoded.data.map((d) => [d.index, d.embedding]), texts.map((t, i) => [i, fakeVector(t, 4)]));
    assert.deepEqual(geminiEmbeddingsWire.summarize(fake.requests.at(-1)!), { model: 'gemini-embedding-001', inputs: texts, dimensions: 4 });
    const raw = await postJson(`${gw.url}/v1/embeddings`, { model: 'gem-embed', input: texts, dimensions: 4, encoding_format: 'base64' }, { authorization: `Bearer ${key}` });
    assert.equal(raw.status, 200);
    assert.deepEqual(raw.body.data.map((d: { embedding: string }) => base64ToVector(d.embedding)), texts.map((t) => fakeVector(t, 4)));
    assert.equal(fake.requests.length, 3, 'one upstream call per request');
  });

  test('refused before any I/O: dimensions on embedding-001, past 3072, and 101 inputs', async () => {
    const before = fake.requests.length;
    const old = await clientFailure(client.embeddings.create({ model: 'old-embed', input: 'x', dimensions: 8 }));
    assert.equal(old.status, 400);
    assert.equal(old.error?.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.deepEqual(old.error?.details, { provider: 'gemini', capability: 'dimensions', model: 'embedding-001' });
    const big = await clientFailure(client.embeddings.create({ model: 'gem-embed', input: 'x', dimensions: 4096 }));
    assert.equal(big.status, 400);
    assert.equal(big.error?.code, 'VALIDATION_ERROR');
    const many = await clientFailure(client.embeddings.create({ model: 'gem-embed', input: Array.from({ length: 101 }, (_, i) => `t${i}`) }));
    assert.equal(many.status, 400);
    assert.equal(many.error?.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.deepEqual(many.error?.details, { provider: 'gemini', capability: 'embeddings', maxInputs: 100 });
    assert.equal(fake.requests.length, before, 'the upstream was not called');
  });

  test('an upstream INVALID_ARGUMENT: 400 UPSTREAM_BAD_REQUEST with Google\'s message', async () => {
    fake.mode = { kind: 'error', status: 400, message: 'Request contains an invalid argument.' };
    const err = await clientFailure(client.embeddings.create({ model: 'gem-embed', input: 'x' }));
    assert.equal(err.status, 400);
    assert.equal(err.error?.code, 'UPSTREAM_BAD_REQUEST');
  });
});
