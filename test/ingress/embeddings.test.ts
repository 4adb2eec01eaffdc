/**
 * POST /v1/embeddings: every validation rule with its exact code, the gateway's checks of the answer (order,
 * count, indexes, decodable vectors, dimensions), base64 converted both ways whatever the upstream returns,
 * estimated usage, and capability refusals decided before any I/O (skipped in fallback).
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, afterEach, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { base64ToVector, vectorToBase64 } from '../../core/canonical/embeddings.ts';
import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from '../fakes/openai.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertValidationIssue } from '../helpers/failures.ts';

const V = [[0.5, -0.25, 0.125], [1, 2, -3], [0.75, 0, 4]];

function answer(res: ServerResponse, data: unknown[], usage: unknown = { prompt_tokens: 6, total_tokens: 6 }, model = 'm') {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ object: 'list', data, model, ...(usage ? { usage } : {}) }));
}
const item = (embedding: unknown, index: number) => ({ object: 'embedding', embedding, index });
const inputsOf = (req: RecordedRequest) => (typeof req.body.input === 'string' ? [req.body.input] : (req.body.input as string[]));

describe('POST /v1/embeddings', () => {
  let openai: FakeOpenAI;
  let mistral: FakeOpenAI;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;

  before(async () => {
    openai = await startFakeOpenAI();
    mistral = await startFakeOpenAI();
    gw = await startTestGateway(`
routing:
  retries: 0
providers:
  openai: { baseUrl: ${openai.baseUrl}, apiKey: sk-openai }
  mistral: { baseUrl: ${mistral.baseUrl}, apiKey: sk-mistral }
  anthropic: { baseUrl: ${openai.baseUrl}, apiKey: sk-anthropic }
models:
  - { id: embed, provider: openai, upstreamModel: text-embedding-3-small }
  - { id: ada, provider: openai, upstreamModel: text-embedding-ada-002 }
  - { id: claude, provider: anthropic, upstreamModel: claude-sonnet-4-5 }
  - id: chat-then-embed
    strategy: fallback
    targets: [{ provider: anthropic, upstreamModel: claude-sonnet-4-5 }, { provider: openai, upstreamModel: text-embedding-3-small }]
  - id: ada-then-codestral
    strategy: fallback
    targets: [{ provider: openai, upstreamModel: text-embedding-ada-002 }, { provider: mistral, upstreamModel: codestral-embed }]
  - id: no-dimensions
    strategy: fallback
    targets: [{ provider: openai, upstreamModel: text-embedding-ada-002 }, { provider: mistral, upstreamModel: mistral-embed }]
pipelines:
  - name: data
    routes: [/v1/embeddings, /v1/chat/completions]
    plugins: [auth]
`);
    key = await gw.createKey({ scopes: { capabilities: ['embeddings', 'chat'] } });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
  });
  afterEach(() => {
    for (const fake of [openai, mistral]) {
      fake.reset();
      fake.requests.length = 0;
    }
  });
  after(async () => {
    await gw.close();
    await openai.close();
    await mistral.close();
  });

  const call = (body: unknown, headers: Record<string, string> = { authorization: `Bearer ${key}` }) => postJson(`${gw.url}/v1/embeddings`, body, headers);
  const upstreamCalls = () => openai.requests.length + mistral.requests.length;

  describe('validation: 400 VALIDATION_ERROR with the path, before any I/O', () => {
    const cases: Array<[string, unknown, string, RegExp]> = [
      ['model missing', { input: 'x' }, '/model', /required/],
      ['model empty', { model: '', input: 'x' }, '/model', /fewer than 1/],
      ['input missing', { model: 'embed' }, '/input', /required/],
      ['input empty', { model: 'embed', input: '' }, '/input', /not be empty/],
      ['input an empty array', { model: 'embed', input: [] }, '/input', /at least one/],
      ['an empty text in the batch', { model: 'embed', input: ['a', ''] }, '/input/1', /not be empty/],
      ['a text that is not a string', { model: 'embed', input: ['a', { text: 'b' }] }, '/input/1', /must be a string/],
      ['input a number', { model: 'embed', input: 5 }, '/input', /string or an array of strings/],
      ['a token array', { model: 'embed', input: [1, 2, 3] }, '/input', /token arrays/],
      ['token arrays', { model: 'embed', input: [[1, 2], [3]] }, '/input', /token arrays/],
      ['2049 inputs', { model: 'embed', input: Array.from({ length: 2049 }, () => 'x') }, '/input', /at most 2048/],
      ['dimensions 0', { model: 'embed', input: 'x', dimensions: 0 }, '/dimensions', /must be >= 1/],
      ['dimensions not an integer', { model: 'embed', input: 'x', dimensions: 1.5 }, '/dimensions', /integer/],
      ['an unknown encoding_format', { model: 'embed', input: 'x', encoding_format: 'int8' }, '/encoding_format', /one of "float", "base64"/],
      ['user not a string', { model: 'embed', input: 'x', user: 5 }, '/user', /string/],
      ['an unknown field', { model: 'embed', input: 'x', input_type: 'query' }, '/input_type', /not a known property/],
    ];
    for (const [name, body, path, message] of cases) {
      test(name, async () => {
        assertValidationIssue(await call(body), path, message);
        assert.equal(upstreamCalls(), 0);
      });
    }

    test('2048 inputs are accepted', async () => {
      openai.handle((req, res) => answer(res, inputsOf(req).map((_, i) => item([i], i))));
      const res = await call({ model: 'ada', input: Array.from({ length: 2048 }, (_, i) => `t${i}`) });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.length, 2048);
      assert.deepEqual(res.body.data[2047], { object: 'embedding', embedding: [2047], index: 2047 });
    });

    test('a body that is not JSON; no credential; a key without the capability; an unknown model', async () => {
      const notJson = await call('{"model": ');
      assert.deepEqual([notJson.status, notJson.body.error.code], [400, 'VALIDATION_ERROR']);
      const anonymous = await call({ model: 'embed', input: 'x' }, {});
      assert.deepEqual([anonymous.status, anonymous.body.error.code], [401, 'AUTH_REQUIRED']);
      const chatKey = await gw.createKey({ scopes: { capabilities: ['chat'] } });
      const forbidden = await call({ model: 'embed', input: 'x' }, { authorization: `Bearer ${chatKey}` });
      assert.deepEqual([forbidden.status, forbidden.body.error.code, forbidden.body.error.details], [403, 'AUTH_FORBIDDEN', { requiredCapability: 'embeddings' }]);
      const unknown = await call({ model: 'nope', input: 'x' });
      assert.deepEqual([unknown.status, unknown.body.error.code], [404, 'MODEL_NOT_FOUND']);
      assert.equal(upstreamCalls(), 0);
    });
  });

  describe('the answer', () => {
    test('floats by default, sorted by index whatever the upstream order; model after routing; the three headers', async () => {
      openai.handle((_, res) => answer(res, [item(V[2], 2), item(V[0], 0), item(V[1], 1)]));
      const res = await call({ model: 'embed', input: ['a', 'b', 'c'] });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {
        object: 'list', model: 'text-embedding-3-small', usage: { prompt_tokens: 6, total_tokens: 6 },
        data: V.map((v, i) => item(v, i)),
      });
      assert.equal(res.headers.get('x-provider'), 'openai');
      assert.equal(res.headers.get('x-model'), 'text-embedding-3-small');
      assert.ok(res.headers.get('x-request-id'));
      assert.deepEqual(openai.requests[0]!.body, { model: 'text-embedding-3-small', input: ['a', 'b', 'c'], encoding_format: 'float' });
      assert.equal(openai.requests[0]!.path, '/v1/embeddings');
    });

    test('base64 from the upstream, floats asked: the gateway decodes', async () => {
      openai.handle((_, res) => answer(res, [item(vectorToBase64(V[0]!), 0)]));
      const res = await call({ model: 'embed', input: 'a', encoding_format: 'float' });
      assert.deepEqual(res.body.data[0].embedding, V[0]);
    });

    test('floats from the upstream, base64 asked: the gateway encodes (and the openai client decodes it)', async () => {
      openai.handle((_, res) => answer(res, [item(V[1], 0)]));
      const res = await call({ model: 'embed', input: 'a', encoding_format: 'base64' });
      assert.equal(openai.requests[0]!.body.encoding_format, 'base64');
      assert.equal(typeof res.body.data[0].embedding, 'string');
      assert.deepEqual(base64ToVector(res.body.data[0].embedding), V[1]);
      const viaClient = await client.embeddings.create({ model: 'embed', input: 'a' });
      assert.deepEqual(viaClient.data[0]!.embedding, V[1]);
    });

    test('no usage from the upstream: estimated from the inputs', async () => {
      openai.handle((_, res) => answer(res, [item(V[0], 0), item(V[1], 1)], null));
      const res = await call({ model: 'embed', input: ['hello world', 'and more words here'] });
      assert.equal(res.status, 200);
      assert.ok(res.body.usage.prompt_tokens >= 6, JSON.stringify(res.body.usage));
      assert.equal(res.body.usage.total_tokens, res.body.usage.prompt_tokens);
    });

    const badAnswers: Array<[string, (res: ServerResponse) => void, RegExp]> = [
      ['fewer vectors than inputs', (res) => answer(res, [item(V[0], 0)]), /1 embeddings for 2 inputs/],
      ['more vectors than inputs', (res) => answer(res, [item(V[0], 0), item(V[1], 1), item(V[2], 2)]), /3 embeddings for 2 inputs/],
      ['an index twice', (res) => answer(res, [item(V[0], 0), item(V[1], 0)]), /indexes/],
      ['an index past the inputs', (res) => answer(res, [item(V[0], 0), item(V[1], 2)]), /indexes/],
      ['base64 that does not decode', (res) => answer(res, [item('abc', 0), item(V[1], 1)]), /neither floats nor base64/],
      ['a vector that is not numbers', (res) => answer(res, [item(['x'], 0), item(V[1], 1)]), /neither floats nor base64/],
      ['no data list', (res) => answer(res, null as unknown as unknown[]), /malformed/],
    ];
    for (const [name, respond, message] of badAnswers) {
      test(`${name} -> 502 UPSTREAM_ERROR, never a misaligned answer`, async () => {
        openai.handle((_, res) => respond(res));
        const res = await call({ model: 'embed', input: ['a', 'b'] });
        assert.equal(res.status, 502, JSON.stringify(res.body));
        assert.equal(res.body.error.code, 'UPSTREAM_ERROR');
        assert.match(res.body.error.message, message);
      });
    }

    test('dimensions passed on where the model has them; vectors of another length -> 502', async () => {
      openai.handle((_, res) => answer(res, [item(V[0], 0)]));
      const ok = await call({ model: 'embed', input: 'a', dimensions: 3 });
      assert.equal(ok.status, 200);
      assert.equal(openai.requests[0]!.body.dimensions, 3);
      const ignored = await call({ model: 'embed', input: 'a', dimensions: 2 });
      assert.equal(ignored.status, 502);
      assert.match(ignored.body.error.message, /3-dimensional vectors where 2 were asked/);
    });
  });

  describe('capabilities, decided before any I/O', () => {
    test('a provider without embeddings: 400 CAPABILITY_NOT_SUPPORTED naming it', async () => {
      const res = await call({ model: 'claude', input: 'x' });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
      assert.deepEqual(res.body.error.details, { provider: 'anthropic', capability: 'embeddings' });
      assert.equal(upstreamCalls(), 0);
    });

    test('dimensions on a model without shorter vectors: 400 CAPABILITY_NOT_SUPPORTED', async () => {
      const res = await call({ model: 'ada', input: 'x', dimensions: 8 });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body.error.details, { provider: 'openai', capability: 'dimensions', model: 'text-embedding-ada-002' });
      assert.equal(upstreamCalls(), 0);
    });

    test('fallback skips a target without embeddings', async () => {
      openai.handle((_, res) => answer(res, [item(V[0], 0)]));
      const res = await call({ model: 'chat-then-embed', input: 'x' });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-provider'), 'openai');
      assert.equal(openai.requests.length, 1);
    });

    test('fallback skips a target whose model has no dimensions; Mistral gets them as output_dimension', async () => {
      mistral.handle((_, res) => answer(res, [item(V[0], 0)]));
      const res = await call({ model: 'ada-then-codestral', input: 'x', dimensions: 3, user: 'u-1' });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-provider'), 'mistral');
      assert.equal(openai.requests.length, 0);
      assert.deepEqual(mistral.requests[0]!.body, { model: 'codestral-embed', input: 'x', encoding_format: 'float', output_dimension: 3 });
    });

    test('no target can: the first refusal, and no I/O', async () => {
      const res = await call({ model: 'no-dimensions', input: 'x', dimensions: 3 });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body.error.details, { provider: 'openai', capability: 'dimensions', model: 'text-embedding-ada-002' });
      assert.equal(upstreamCalls(), 0);
    });

    test('/openapi.json documents both endpoints', async () => {
      const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as { paths: Record<string, { post?: { requestBody?: unknown } }> };
      assert.ok(doc.paths['/v1/embeddings']?.post?.requestBody);
      assert.ok(doc.paths['/v1/rerank']?.post?.requestBody);
    });
  });
});
