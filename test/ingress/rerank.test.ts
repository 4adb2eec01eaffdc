/**
 * POST /v1/rerank: every validation rule with its exact code, the 10 MB limit, and the answer the gateway builds
 * from any translator's scores (sorted, ties in document order, top_n, documents as {text} only when asked, id
 * equal to X-Request-ID, no model field), against a loopback fake of Cohere's /v2/rerank.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, afterEach, before, describe, test } from 'node:test';
import type { RerankResult } from '../../core/canonical/rerank.ts';
import { finishRerank } from '../../core/dispatch/rerank-call.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertValidationIssue } from '../helpers/failures.ts';

const DOCS = ['alpha', 'beta', 'gamma', 'delta'];

function cohereAnswer(res: ServerResponse, results: Array<{ index: number; relevance_score: number }>, searchUnits = 1) {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ id: 'cohere-id', results, meta: { api_version: { version: '2' }, billed_units: { search_units: searchUnits } } }));
}

describe('POST /v1/rerank', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let key: string;

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(`
routing:
  retries: 0
providers:
  cohere: { baseUrl: ${fake.url}, apiKey: co-key }
  openai: { baseUrl: ${fake.baseUrl}, apiKey: sk-openai }
models:
  - { id: rerank, provider: cohere, upstreamModel: rerank-v3.5 }
  - { id: gpt, provider: openai, upstreamModel: gpt-4o-mini }
pipelines:
  - name: data
    routes: [/v1/rerank]
    plugins: [auth]
`);
    key = await gw.createKey({ scopes: { capabilities: ['rerank'] } });
  });
  afterEach(() => {
    fake.reset();
    fake.requests.length = 0;
  });
  after(async () => {
    await gw.close();
    await fake.close();
  });

  const call = (body: unknown, headers: Record<string, string> = {}) =>
    postJson(`${gw.url}/v1/rerank`, body, { authorization: `Bearer ${key}`, ...headers });
  const valid = (extra: Record<string, unknown> = {}) => ({ model: 'rerank', query: 'which letter', documents: DOCS, ...extra });

  describe('validation: 400 VALIDATION_ERROR with the path, before any I/O', () => {
    const cases: Array<[string, unknown, string, RegExp]> = [
      ['model missing', { query: 'q', documents: DOCS }, '/model', /required/],
      ['query missing', { model: 'rerank', documents: DOCS }, '/query', /required/],
      ['query empty', valid({ query: '' }), '/query', /fewer than 1/],
      ['query not a string', valid({ query: ['q'] }), '/query', /string/],
      ['documents missing', { model: 'rerank', query: 'q' }, '/documents', /required/],
      ['no documents', valid({ documents: [] }), '/documents', /fewer than 1/],
      ['10,001 documents', valid({ documents: Array.from({ length: 10_001 }, () => 'd') }), '/documents', /more than 10000/],
      ['a document that is not a string', valid({ documents: ['a', { text: 'b' }] }), '/documents/1', /string/],
      ['top_n 0', valid({ top_n: 0 }), '/top_n', />= 1/],
      ['top_n not an integer', valid({ top_n: 1.5 }), '/top_n', /integer/],
      ['top_n past the documents', valid({ top_n: 5 }), '/top_n', /at most the number of documents \(4\)/],
      ['return_documents not a boolean', valid({ return_documents: 'yes' }), '/return_documents', /boolean/],
      ['an unknown field', valid({ rank_fields: ['text'] }), '/rank_fields', /not a known property/],
    ];
    for (const [name, body, path, message] of cases) {
      test(name, async () => {
        assertValidationIssue(await call(body), path, message);
        assert.equal(fake.requests.length, 0);
      });
    }

    test('a body over 10 MB: 413 PAYLOAD_TOO_LARGE before it is read', async () => {
      const big = 'x'.repeat(1024 * 1024);
      const res = await call(valid({ documents: Array.from({ length: 11 }, () => big) }));
      assert.equal(res.status, 413);
      assert.equal(res.body.error.code, 'PAYLOAD_TOO_LARGE');
      assert.deepEqual(res.body.error.details, { limitBytes: 10 * 1024 * 1024 });
      assert.equal(fake.requests.length, 0);
    });

    test('10,000 documents and top_n equal to their count are accepted', async () => {
      fake.handle((req, res) => cohereAnswer(res, (req.body.documents as string[]).map((_, index) => ({ index, relevance_score: 0.5 }))));
      const documents = Array.from({ length: 10_000 }, (_, i) => `d${i}`);
      const res = await call(valid({ documents, top_n: 10_000 }));
      assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
      assert.equal(res.body.results.length, 10_000);
      assert.deepEqual(res.body.results.slice(0, 2).map((r: { index: number }) => r.index), [0, 1], 'equal scores keep the documents\' order');
    });
  });

  describe('the answer', () => {
    test('sorted by relevance, ties in document order; id mirrors X-Request-ID; no model field; X-Model; search units', async () => {
      fake.handle((_, res) => cohereAnswer(res, [{ index: 3, relevance_score: 0.25 }, { index: 1, relevance_score: 0.75 }, { index: 0, relevance_score: 0.25 }, { index: 2, relevance_score: 0.5 }], 3));
      const res = await call(valid(), { 'x-request-id': 'caller-chosen-id' });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {
        id: 'caller-chosen-id',
        results: [{ index: 1, relevance_score: 0.75 }, { index: 2, relevance_score: 0.5 }, { index: 0, relevance_score: 0.25 }, { index: 3, relevance_score: 0.25 }],
        meta: { billed_units: { search_units: 3 } },
      });
      assert.equal(res.headers.get('x-request-id'), 'caller-chosen-id');
      assert.equal(res.headers.get('x-model'), 'rerank-v3.5');
      assert.equal(res.headers.get('x-provider'), 'cohere');
      const sent = fake.requests[0]!;
      assert.equal(sent.path, '/v2/rerank');
      assert.deepEqual(sent.body, { model: 'rerank-v3.5', query: 'which letter', documents: DOCS });
    });

    test('top_n and return_documents: the best n, each with its document as {text}', async () => {
      fake.handle((_, res) => cohereAnswer(res, [{ index: 2, relevance_score: 0.875 }, { index: 0, relevance_score: 0.5 }]));
      const res = await call(valid({ top_n: 2, return_documents: true }));
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.results, [
        { index: 2, relevance_score: 0.875, document: { text: 'gamma' } },
        { index: 0, relevance_score: 0.5, document: { text: 'alpha' } },
      ]);
      assert.equal(fake.requests[0]!.body.top_n, 2);
      assert.equal(res.body.id, res.headers.get('x-request-id'));
    });

    test('a score outside 0 to 1, or an index that is no document -> 502 UPSTREAM_ERROR', async () => {
      fake.handle((_, res) => cohereAnswer(res, [{ index: 0, relevance_score: 1.5 }]));
      const score = await call(valid());
      assert.deepEqual([score.status, score.body.error.code], [502, 'UPSTREAM_ERROR']);
      fake.handle((_, res) => cohereAnswer(res, [{ index: 4, relevance_score: 0.5 }]));
      const index = await call(valid());
      assert.deepEqual([index.status, index.body.error.code], [502, 'UPSTREAM_ERROR']);
    });

    test('a provider without rerank: 400 CAPABILITY_NOT_SUPPORTED naming it, before any I/O', async () => {
      const res = await call(valid({ model: 'gpt' }));
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
      assert.deepEqual(res.body.error.details, { provider: 'openai', capability: 'rerank' });
      assert.equal(fake.requests.length, 0);
    });
  });
});

describe('the gateway\'s own checks of any rerank translator\'s answer', () => {
  const target: ProviderTarget = { slug: 'acme', baseUrl: 'http://acme', headers: {}, options: {}, upstreamModel: 'r' };
  const request = { model: 'r', query: 'q', documents: ['a', 'b', 'c'] };
  const result = (results: RerankResult['results'], units = 1): RerankResult => ({ object: 'rerank', id: '', results, meta: { billed_units: { search_units: units } } });
  const code = (fn: () => unknown) => {
    try {
      fn();
      return 'none';
    } catch (err) {
      return (err as { code?: string }).code;
    }
  };

  test('scores outside 0..1, not numbers, indexes out of range or repeated, fractional search units: UPSTREAM_ERROR', () => {
    for (const bad of [
      result([{ index: 0, relevance_score: -0.1 }]),
      result([{ index: 0, relevance_score: 1.01 }]),
      result([{ index: 0, relevance_score: Number.NaN }]),
      result([{ index: 3, relevance_score: 0.5 }]),
      result([{ index: 1, relevance_score: 0.5 }, { index: 1, relevance_score: 0.4 }]),
      result([{ index: 0, relevance_score: 0.5 }], 1.5),
      { object: 'rerank', id: '', meta: { billed_units: { search_units: 1 } } } as unknown as RerankResult,
    ]) assert.equal(code(() => finishRerank(target, request, bad, 'req-1')), 'UPSTREAM_ERROR', JSON.stringify(bad));
  });

  test('documents the translator echoed are dropped unless asked for; the id is the request id', () => {
    const echoed = result([{ index: 1, relevance_score: 0.5, document: { text: 'b' } }]);
    assert.deepEqual(finishRerank(target, request, echoed, 'req-1'), { object: 'rerank', id: 'req-1', results: [{ index: 1, relevance_score: 0.5 }], meta: { billed_units: { search_units: 1 } } });
  });
});
