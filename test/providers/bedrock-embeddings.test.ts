/**
 * Bedrock embeddings through InvokeModel: Titan Text Embeddings (one input a call; dimensions 256/512/1024 on
 * v2 only) and Cohere Embed (texts up to 96; output_dimension on v4), chosen by the model id; usage from Titan's
 * inputTextTokenCount; errors through the provider's mapError. Against a loopback fake that recomputes every
 * SigV4 signature from the bytes it received, and with a Bedrock API key.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type OpenAI from 'openai';
import { base64ToVector, type EmbeddingsRequest } from '../../core/canonical/embeddings.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import bedrock from '../../providers/bedrock/index.ts';
import { bedrockWire } from '../conformance/wires/bedrock.ts';
import { bedrockEmbeddingsWire } from '../conformance/wires/bedrock-embeddings.ts';
import { callDirect, fakeVector, startEmbeddingsFake, startEmbeddingsGateway, type EmbeddingsFake } from '../conformance/wires/embeddings-fake.ts';
import { postJson, type TestGateway } from '../helpers/gateway.ts';
import { clientFailure, gatewayError, gatewayRejection } from '../helpers/failures.ts';

const embeddings = bedrock.embeddings!;
const TITAN = 'amazon.titan-embed-text-v2:0';
const COHERE = 'cohere.embed-english-v3';
const target = (upstreamModel = TITAN, extra: Partial<ProviderTarget> = {}): ProviderTarget => ({
  slug: 'bedrock', baseUrl: 'https://bedrock-runtime.us-east-1.amazonaws.com', headers: {}, options: { region: 'us-east-1' }, upstreamModel, ...extra,
});
const req = (fields: Partial<EmbeddingsRequest> = {}): EmbeddingsRequest => ({ model: 'embed', input: 'hello', ...fields });
const sent = (request: EmbeddingsRequest, t = target()) => JSON.parse(embeddings.toUpstream(request, t).body!);
const inputs = (n: number) => Array.from({ length: n }, (_, i) => `text ${i}`);

describe('bedrock embeddings: the request', () => {
  test('declared: capabilities.embeddings and a translator', () => {
    assert.deepEqual(bedrock.capabilities.embeddings, {});
  });

  test('Titan: InvokeModel with inputText (and dimensions on v2); the id is one percent-encoded segment', () => {
    const built = embeddings.toUpstream(req({ dimensions: 512 }), target());
    assert.equal(built.method, 'POST');
    assert.equal(built.path, '/model/amazon.titan-embed-text-v2%3A0/invoke');
    assert.equal(built.headers['content-type'], 'application/json');
    assert.equal(built.headers.accept, 'application/json');
    assert.deepEqual(JSON.parse(built.body!), { inputText: 'hello', dimensions: 512 });
    assert.deepEqual(sent(req({ user: 'u-1' }), target('amazon.titan-embed-text-v1')), { inputText: 'hello' });
  });

  test('Cohere: texts in order, input_type search_document unless configured, truncate NONE (refused, not cut)', () => {
    assert.deepEqual(sent(req({ input: ['a', 'b'] }), target(COHERE)), { texts: ['a', 'b'], input_type: 'search_document', truncate: 'NONE' });
    const query = sent(req({ input: 'q' }), target('cohere.embed-multilingual-v3', { options: { embeddingInputType: 'search_query' } }));
    assert.equal(query.input_type, 'search_query');
    assert.deepEqual(sent(req({ dimensions: 256 }), target('us.cohere.embed-v4:0')).output_dimension, 256);
  });

  test('the model is recognized behind an inference profile or an ARN', () => {
    assert.equal(embeddings.toUpstream(req(), target('arn:aws:bedrock:us-east-1::foundation-model/amazon.titan-embed-text-v2:0')).path,
      '/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A%3Afoundation-model%2Famazon.titan-embed-text-v2%3A0/invoke');
    assert.deepEqual(Object.keys(sent(req({ input: ['a', 'b'] }), target('eu.cohere.embed-v4:0'))), ['texts', 'input_type', 'truncate']);
  });

  test('supportsDimensions: Titan v2 and Cohere v4; not Titan v1 nor Cohere v3 nor other models', () => {
    for (const model of [TITAN, 'us.cohere.embed-v4:0', 'cohere.embed-v4:0']) assert.equal(embeddings.supportsDimensions(model), true, model);
    for (const model of ['amazon.titan-embed-text-v1', 'amazon.titan-embed-g1-text-02', COHERE, 'anthropic.claude-sonnet-4-5-v1:0']) assert.equal(embeddings.supportsDimensions(model), false, model);
  });

  test('dimensions outside the model\'s sizes: 400 VALIDATION_ERROR naming them, never rounded', () => {
    const titan = gatewayError(() => embeddings.toUpstream(req({ dimensions: 300 }), target()));
    assert.equal(titan.code, 'VALIDATION_ERROR');
    assert.equal(titan.status, 400);
    assert.deepEqual(titan.details, [{ path: '/dimensions', message: `must be one of 256, 512, 1024 for ${TITAN}` }]);
    assert.equal(gatewayError(() => embeddings.toUpstream(req({ dimensions: 2048 }), target('cohere.embed-v4:0'))).code, 'VALIDATION_ERROR');
  });

  test('a batch to Titan (one input a call) or past 96 to Cohere: 400 CAPABILITY_NOT_SUPPORTED naming the cap', () => {
    const titan = gatewayError(() => embeddings.toUpstream(req({ input: ['a', 'b'] }), target()));
    assert.equal(titan.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.equal(titan.message, `Provider bedrock embeds at most 1 input per request with ${TITAN} (got 2)`);
    assert.deepEqual(titan.details, { provider: 'bedrock', capability: 'embeddings', maxInputs: 1 });
    assert.deepEqual(sent(req({ input: ['only'] })), { inputText: 'only' }, 'a batch of one is fine');
    assert.equal(sent(req({ input: inputs(96) }), target(COHERE)).texts.length, 96);
    const cohere = gatewayError(() => embeddings.toUpstream(req({ input: inputs(97) }), target(COHERE)));
    assert.equal(cohere.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.match(cohere.message, /at most 96 inputs/);
  });

  test('a model with no embeddings body (a chat model, a provisioned-model ARN): 400 CAPABILITY_NOT_SUPPORTED', () => {
    for (const model of ['anthropic.claude-sonnet-4-5-v1:0', 'arn:aws:bedrock:us-east-1:123456789012:provisioned-model/abc123']) {
      const err = gatewayError(() => embeddings.toUpstream(req(), target(model)));
      assert.equal(err.code, 'CAPABILITY_NOT_SUPPORTED');
      assert.deepEqual(err.details, { provider: 'bedrock', capability: 'embeddings' });
    }
  });
});

describe('bedrock embeddings: the answer', () => {
  test('Titan: the vector and inputTextTokenCount as usage', () => {
    const result = embeddings.fromUpstream({ embedding: [0.5, -0.5], inputTextTokenCount: 4, embeddingsByType: { float: [0.5, -0.5] } }, target(), req());
    assert.deepEqual(result, { object: 'list', data: [{ object: 'embedding', embedding: [0.5, -0.5], index: 0 }], model: TITAN, usage: { prompt_tokens: 4, completion_tokens: 0, total_tokens: 4 } });
  });

  test('Cohere: embeddings_floats and embeddings_by_type, in order, no usage (the gateway estimates it)', () => {
    const floats = embeddings.fromUpstream({ id: 'x', embeddings: [[1], [2]], response_type: 'embeddings_floats', texts: ['a', 'b'] }, target(COHERE), req({ input: ['a', 'b'] }));
    assert.deepEqual(floats.data.map((d) => d.embedding), [[1], [2]]);
    assert.equal(floats.usage, undefined);
    const byType = embeddings.fromUpstream({ id: 'x', embeddings: { float: [[3], [4]] }, response_type: 'embeddings_by_type' }, target(COHERE), req({ input: ['a', 'b'] }));
    assert.deepEqual(byType.data.map((d) => [d.index, d.embedding]), [[0, [3]], [1, [4]]]);
  });

  test('a malformed answer: 502 UPSTREAM_ERROR', () => {
    for (const [model, body] of [[TITAN, {}], [TITAN, { embedding: 'x' }], [COHERE, { embeddings: [[1]] }], [COHERE, { embeddings: { int8: [[1], [2]] } }]] as const) {
      assert.equal(gatewayError(() => embeddings.fromUpstream(body, target(model), req({ input: model === TITAN ? 'a' : ['a', 'b'] }))).code, 'UPSTREAM_ERROR');
    }
  });
});

const AWS = { accessKeyId: 'AKIAIOSFODNN7EMBEDDS', secretAccessKey: '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', sessionToken: 'IQoJb3JpZ2luX2VjE+embed/session==', region: 'us-east-1' };

for (const auth of ['sigv4', 'apiKey'] as const) {
  describe(`bedrock embeddings against a loopback fake (${auth})`, () => {
    const check = auth === 'sigv4' ? bedrockWire({ kind: 'sigv4', ...AWS }) : bedrockWire({ kind: 'apiKey', apiKey: 'ABSK-embeddings-key' });
    let fake: EmbeddingsFake;
    const live = (model: string): ProviderTarget => target(model, {
      baseUrl: fake.url,
      ...(auth === 'sigv4' ? { options: { region: AWS.region, accessKeyId: AWS.accessKeyId, secretAccessKey: AWS.secretAccessKey, sessionToken: AWS.sessionToken } } : { apiKey: 'ABSK-embeddings-key' }),
    });
    before(async () => {
      fake = await startEmbeddingsFake(bedrockEmbeddingsWire({ cohereByType: auth === 'apiKey' }), (req, res) => check.refuse(req, res));
    });
    after(() => fake.close());

    test('Titan single with dimensions, Cohere batch: signed bodies accepted, vectors in order, Titan usage', async () => {
      fake.mode = { kind: 'answer', length: 256 };
      const titan = await callDirect(bedrock, live(TITAN), req({ input: 'three small words', dimensions: 256 }));
      assert.deepEqual(titan.data[0]!.embedding, fakeVector('three small words', 256));
      assert.deepEqual(titan.usage, { prompt_tokens: 3, completion_tokens: 0, total_tokens: 3 });
      fake.mode = { kind: 'answer', length: 8 };
      const texts = ['first', 'second', 'third'];
      const cohere = await callDirect(bedrock, live(COHERE), req({ input: texts }));
      assert.deepEqual(cohere.data.map((d) => d.embedding), texts.map((t) => fakeVector(t, 8)));
      assert.equal(cohere.usage, undefined);
      assert.deepEqual(check.refused, []);
      assert.deepEqual(fake.problems, []);
      assert.equal(fake.requests.length, 2);
    });

    test('upstream errors through mapError: ValidationException 400, AccessDenied 403, Throttling 429, ModelError 424', async () => {
      const expected: Record<number, [string, number]> = { 400: ['UPSTREAM_BAD_REQUEST', 400], 403: ['UPSTREAM_ERROR', 502], 429: ['UPSTREAM_RATE_LIMITED', 429], 424: ['UPSTREAM_ERROR', 502] };
      for (const [status, [code, httpStatus]] of Object.entries(expected)) {
        fake.mode = { kind: 'error', status: Number(status), message: 'Malformed input request' };
        const err = await gatewayRejection(callDirect(bedrock, live(TITAN), req()));
        assert.equal(err.code, code, `upstream ${status}`);
        assert.equal(err.status, httpStatus);
        assert.match(err.message, /Exception: Malformed input request/);
      }
      assert.deepEqual(check.refused, []);
    });
  });
}

describe('bedrock embeddings through the gateway, called with the openai client (SigV4)', () => {
  const check = bedrockWire({ kind: 'sigv4', ...AWS });
  let fake: EmbeddingsFake;
  let gw: TestGateway;
  let client: OpenAI;
  let key: string;
  before(async () => {
    fake = await startEmbeddingsFake(bedrockEmbeddingsWire(), (req, res) => check.refuse(req, res));
    ({ gw, key, client } = await startEmbeddingsGateway(`
providers:
  bedrock:
    baseUrl: ${fake.url}
    options:
      region: ${AWS.region}
      accessKeyId: \${AWS_ACCESS_KEY_ID}
      secretAccessKey: \${AWS_SECRET_ACCESS_KEY}
      sessionToken: \${AWS_SESSION_TOKEN}
models:
  - { id: titan, provider: bedrock, upstreamModel: "${TITAN}" }
  - { id: cohere, provider: bedrock, upstreamModel: ${COHERE} }
  - id: titan-then-cohere
    strategy: fallback
    targets:
      - { provider: bedrock, upstreamModel: "${TITAN}" }
      - { provider: bedrock, upstreamModel: ${COHERE} }
`, { AWS_ACCESS_KEY_ID: AWS.accessKeyId, AWS_SECRET_ACCESS_KEY: AWS.secretAccessKey, AWS_SESSION_TOKEN: AWS.sessionToken }));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('Titan with dimensions, as floats and as the client\'s default base64; usage from inputTextTokenCount', async () => {
    fake.mode = { kind: 'answer', length: 256 };
    const { data, response } = await client.embeddings.create({ model: 'titan', input: 'four words of text', dimensions: 256, encoding_format: 'float' }).withResponse();
    assert.equal(response.headers.get('x-provider'), 'bedrock');
    assert.equal(response.headers.get('x-model'), TITAN);
    assert.equal(data.model, TITAN);
    assert.deepEqual(data.data, [{ object: 'embedding', embedding: fakeVector('four words of text', 256), index: 0 }]);
    assert.deepEqual(data.usage, { prompt_tokens: 4, total_tokens: 4 });
    const decoded = await client.embeddings.create({ model: 'titan', input: 'four words of text', dimensions: 256 });
    assert.deepEqual(decoded.data[0]!.embedding, fakeVector('four words of text', 256));
    assert.deepEqual(bedrockEmbeddingsWire().summarize(fake.requests.at(-1)!), { model: TITAN, inputs: ['four words of text'], dimensions: 256 });
    assert.deepEqual(check.refused, []);
  });

  test('Cohere batch in order, floats and base64 on the wire; usage estimated by the gateway', async () => {
    fake.mode = { kind: 'answer', length: 8 };
    const texts = ['first text', 'second', 'the third text'];
    const data = await client.embeddings.create({ model: 'cohere', input: texts, encoding_format: 'float' });
    assert.deepEqual(data.data.map((d) => [d.index, d.embedding]), texts.map((t, i) => [i, fakeVector(t, 8)]));
    assert.ok(data.usage.prompt_tokens > 0 && data.usage.total_tokens === data.usage.prompt_tokens);
    const raw = await postJson(`${gw.url}/v1/embeddings`, { model: 'cohere', input: texts, encoding_format: 'base64' }, { authorization: `Bearer ${key}` });
    assert.equal(raw.status, 200);
    assert.deepEqual(raw.body.data.map((d: { embedding: string }) => base64ToVector(d.embedding)), texts.map((t) => fakeVector(t, 8)));
    assert.deepEqual(check.refused, []);
  });

  test('refused before any I/O: a Titan batch (400 CAPABILITY_NOT_SUPPORTED), Titan dimensions 300 (400 VALIDATION_ERROR), dimensions on Cohere v3', async () => {
    const before = fake.requests.length;
    const batch = await clientFailure(client.embeddings.create({ model: 'titan', input: ['a', 'b'] }));
    assert.equal(batch.status, 400);
    assert.equal(batch.error?.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.deepEqual(batch.error?.details, { provider: 'bedrock', capability: 'embeddings', maxInputs: 1 });
    const dims = await clientFailure(client.embeddings.create({ model: 'titan', input: 'a', dimensions: 300 }));
    assert.equal(dims.status, 400);
    assert.equal(dims.error?.code, 'VALIDATION_ERROR');
    assert.deepEqual(dims.error?.details, [{ path: '/dimensions', message: `must be one of 256, 512, 1024 for ${TITAN}` }]);
    const cohereDims = await clientFailure(client.embeddings.create({ model: 'cohere', input: 'a', dimensions: 256 }));
    assert.equal(cohereDims.status, 400);
    assert.equal(cohereDims.error?.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.equal(fake.requests.length, before, 'the upstream was not called');
  });

  test('a fallback model: a batch the Titan target refuses goes to the Cohere target', async () => {
    fake.mode = { kind: 'answer', length: 4 };
    const { data, response } = await client.embeddings.create({ model: 'titan-then-cohere', input: ['x y', 'z'], encoding_format: 'float' }).withResponse();
    assert.equal(response.headers.get('x-model'), COHERE);
    assert.deepEqual(data.data.map((d) => d.embedding), [fakeVector('x y', 4), fakeVector('z', 4)]);
  });

  test('an upstream ThrottlingException: 429 UPSTREAM_RATE_LIMITED', async () => {
    fake.mode = { kind: 'error', status: 429, message: 'Too many requests' };
    const err = await clientFailure(client.embeddings.create({ model: 'titan', input: 'a' }));
    assert.equal(err.status, 429);
    assert.equal(err.error?.code, 'UPSTREAM_RATE_LIMITED');
    assert.deepEqual(check.refused, []);
  });
});
