/**
 * ratelimit, budget and usage on embeddings and rerank, through POST /v1/embeddings and POST /v1/rerank of an
 * in-process gateway, against one loopback fake that speaks Voyage's documented wire (/embeddings, OpenAI-shaped
 * with usage.total_tokens; /rerank with a data list and usage.total_tokens) and Cohere's (/v2/rerank, results
 * and meta.billed_units.search_units, no tokens). The official openai client is the embeddings caller.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { estimateEmbeddingsTokens, estimateRerankTokens } from '../../core/canonical/estimate.ts';
import { ADMIN_TOKEN, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { recordsOf } from '../helpers/usage.ts';

/** USD per million tokens for the embeddings model and the token-priced reranker; USD per search unit. */
const EMBED_IN = 100;
const VOYAGE_RERANK_IN = 50;
const SEARCH_UNIT = 0.002;
/** What the fakes report: tokens per embeddings input, and a Voyage rerank's tokens. */
const TOKENS_PER_INPUT = 7;
const VOYAGE_RERANK_TOKENS = 40;

interface Fake { url: string; calls: string[]; close(): Promise<void> }

async function startFake(): Promise<Fake> {
  const calls: string[] = [];
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (p: Buffer) => parts.push(p));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString('utf8'));
      calls.push(req.url ?? '');
      let answer: unknown;
      if (req.url === '/embeddings') {
        const inputs: string[] = typeof body.input === 'string' ? [body.input] : body.input;
        const data = inputs.map((_, index) => ({ object: 'embedding', embedding: [0.25, -0.5, index], index }));
        // "no-usage" in the first input: an answer without usage, as some OpenAI-compatible servers send.
        const usage = inputs[0]!.includes('no-usage') ? undefined : { total_tokens: TOKENS_PER_INPUT * inputs.length };
        answer = { object: 'list', data, model: body.model, ...(usage ? { usage } : {}) };
      } else if (req.url === '/rerank') {
        answer = { object: 'list', data: body.documents.map((_: string, index: number) => ({ index, relevance_score: 1 / (index + 1) })), model: body.model, usage: { total_tokens: VOYAGE_RERANK_TOKENS } };
      } else if (req.url === '/v2/rerank') {
        const documents: string[] = body.documents;
        answer = { id: 'r1', results: documents.map((_, index) => ({ index, relevance_score: 1 / (index + 1) })), meta: { billed_units: { search_units: Math.ceil(documents.length / 100) } } };
      } else {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ detail: 'not found' }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

const config = (url: string) => `
providers:
  voyage: { baseUrl: ${url}, apiKey: voyage-secret }
  cohere: { baseUrl: ${url}, apiKey: cohere-secret }
models:
  - { id: embed, provider: voyage, upstreamModel: voyage-3.5, pricing: { input: ${EMBED_IN} } }
  - { id: rerank-cohere, provider: cohere, upstreamModel: rerank-v3.5, pricing: { searchUnit: ${SEARCH_UNIT} } }
  - { id: rerank-voyage, provider: voyage, upstreamModel: rerank-2.5, pricing: { input: ${VOYAGE_RERANK_IN} } }
routing:
  retries: 0
pipelines:
  - name: modalities
    routes: [/v1/embeddings, /v1/rerank, /v1/usage, /v1/budget]
    plugins: [auth, ratelimit, budget, usage]
`;

async function admin(gw: TestGateway, path: string, body: unknown): Promise<any> {
  const r = await postJson(`${gw.url}/admin/v1${path}`, body, { authorization: `Bearer ${ADMIN_TOKEN}` });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

const CAPABILITIES = ['embeddings', 'rerank', 'usage:read', 'budget:read'];
const newKey = (gw: TestGateway, fields: Record<string, unknown> = {}): Promise<{ id: string; key: string }> =>
  admin(gw, '/keys', { name: 'modalities', scopes: { capabilities: CAPABILITIES }, ...fields });

function post(gw: TestGateway, path: string, key: string, body: unknown, requestId?: string) {
  return postJson(`${gw.url}${path}`, body, { authorization: `Bearer ${key}`, ...(requestId ? { 'x-request-id': requestId } : {}) });
}

const documents = (n: number) => Array.from({ length: n }, (_, i) => `document number ${i}`);

async function get(gw: TestGateway, path: string, key: string): Promise<any> {
  const response = await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  return body;
}

describe('limits and accounting for embeddings and rerank', () => {
  let fake: Fake;
  let gw: TestGateway;

  before(async () => {
    fake = await startFake();
    gw = await startTestGateway(config(fake.url));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('usage: embeddings through the openai client (base64 by default, and float) are recorded with their modality, tokens and cost', async () => {
    const { key } = await newKey(gw);
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    const { data, response } = await client.embeddings.create({ model: 'embed', input: ['one', 'two', 'three'] }).withResponse();
    assert.deepEqual(data.data.map((d) => d.embedding), [[0.25, -0.5, 0], [0.25, -0.5, 1], [0.25, -0.5, 2]]);
    const [row] = await recordsOf(gw, response.headers.get('x-request-id')!);
    assert.ok(row);
    assert.deepEqual(
      [row.modality, row.endpoint, row.provider, row.model, Number(row.prompt_tokens), Number(row.completion_tokens), Number(row.total_tokens), Number(row.search_units), row.estimated, Number(row.cost_usd), row.status],
      ['embeddings', '/v1/embeddings', 'voyage', 'embed', 21, 0, 21, 0, false, 21 * EMBED_IN / 1e6, 'completed'],
    );
    const floats = await client.embeddings.create({ model: 'embed', input: 'one', encoding_format: 'float' }).withResponse();
    const [single] = await recordsOf(gw, floats.response.headers.get('x-request-id')!);
    assert.deepEqual([single!.modality, Number(single!.total_tokens), Number(single!.cost_usd)], ['embeddings', 7, 7 * EMBED_IN / 1e6]);
  });

  test('usage: an embeddings answer without usage is recorded with the gateway\'s count of its inputs, flagged estimated', async () => {
    const { key } = await newKey(gw);
    const input = ['no-usage here', 'and a second text'];
    const r = await post(gw, '/v1/embeddings', key, { model: 'embed', input, encoding_format: 'float' }, 'emb-no-usage');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const tokens = await estimateEmbeddingsTokens({ model: 'embed', input });
    assert.deepEqual(r.body.usage, { prompt_tokens: tokens, total_tokens: tokens });
    const [row] = await recordsOf(gw, 'emb-no-usage');
    assert.deepEqual([Number(row!.total_tokens), row!.estimated, Number(row!.cost_usd)], [tokens, true, tokens * EMBED_IN / 1e6]);
  });

  test('usage: a Cohere rerank is recorded with its search units and priced per search unit; a Voyage rerank by its tokens', async () => {
    const { key } = await newKey(gw);
    const cohere = await post(gw, '/v1/rerank', key, { model: 'rerank-cohere', query: 'which one', documents: documents(150) }, 'rr-cohere');
    assert.equal(cohere.status, 200, JSON.stringify(cohere.body));
    assert.deepEqual(cohere.body.meta, { billed_units: { search_units: 2 } });
    const [row] = await recordsOf(gw, 'rr-cohere');
    const estimated = await estimateRerankTokens({ model: 'rerank-cohere', query: 'which one', documents: documents(150) });
    // Cohere reports no tokens: the dispatcher's estimate stands, and only the search units are priced.
    assert.deepEqual(
      [row!.modality, row!.provider, Number(row!.search_units), Number(row!.total_tokens), row!.estimated, Number(row!.cost_usd)],
      ['rerank', 'cohere', 2, estimated, true, 2 * SEARCH_UNIT],
    );

    const voyage = await post(gw, '/v1/rerank', key, { model: 'rerank-voyage', query: 'which one', documents: documents(3) }, 'rr-voyage');
    assert.equal(voyage.status, 200, JSON.stringify(voyage.body));
    const [v] = await recordsOf(gw, 'rr-voyage');
    assert.deepEqual(
      [v!.modality, v!.provider, Number(v!.search_units), Number(v!.total_tokens), v!.estimated, Number(v!.cost_usd)],
      ['rerank', 'voyage', 1, VOYAGE_RERANK_TOKENS, false, VOYAGE_RERANK_TOKENS * VOYAGE_RERANK_IN / 1e6],
    );
  });

  test('GET /v1/usage groups a key\'s embeddings and rerank by modality, with tokens, search units and cost', async () => {
    const { key } = await newKey(gw);
    await recordsOf(gw, (await post(gw, '/v1/embeddings', key, { model: 'embed', input: ['a', 'b'] }, 'g-emb')).headers.get('x-request-id')!);
    await recordsOf(gw, (await post(gw, '/v1/rerank', key, { model: 'rerank-cohere', query: 'q', documents: documents(250) }, 'g-rr')).headers.get('x-request-id')!);
    await recordsOf(gw, (await post(gw, '/v1/rerank', key, { model: 'rerank-cohere', query: 'q', documents: documents(10) }, 'g-rr2')).headers.get('x-request-id')!);
    const page = await get(gw, '/v1/usage?group_by=modality', key);
    const rows = page.data.map((r: any) => [r.modality, r.requests, r.search_units, r.cost_usd]);
    assert.deepEqual(rows, [['embeddings', 1, 0, 14 * EMBED_IN / 1e6], ['rerank', 2, 4, 4 * SEARCH_UNIT]]);
    assert.equal(page.data[0].total_tokens, 14);
  });

  test('ratelimit: embeddings inputs count in tokensPerDay, reserved as counted and settled to the reported usage', async () => {
    const { key } = await newKey(gw, { rateLimits: { tokensPerDay: 1000 } });
    const input = ['first text to embed', 'second text to embed'];
    const reserved = await estimateEmbeddingsTokens({ model: 'embed', input });
    const first = await post(gw, '/v1/embeddings', key, { model: 'embed', input });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.headers.get('x-ratelimit-limit'), '1000');
    assert.equal(first.headers.get('x-ratelimit-remaining'), String(1000 - reserved));
    const second = await post(gw, '/v1/embeddings', key, { model: 'embed', input });
    // The first settled to the 14 tokens reported; the second holds its reservation.
    assert.equal(second.headers.get('x-ratelimit-remaining'), String(1000 - 2 * TOKENS_PER_INPUT - reserved));
  });

  test('ratelimit: an embeddings input larger than the whole tokensPerDay is 400 VALIDATION_ERROR on /input, before any upstream call', async () => {
    const { key } = await newKey(gw, { rateLimits: { tokensPerDay: 20 } });
    const input = 'a text far longer than the whole limit: '.repeat(5);
    const tokens = await estimateEmbeddingsTokens({ model: 'embed', input });
    assert.ok(tokens > 20, `${tokens} tokens`);
    const calls = fake.calls.length;
    const r = await post(gw, '/v1/embeddings', key, { model: 'embed', input });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.deepEqual(r.body, {
      error: {
        code: 'VALIDATION_ERROR',
        message: `The request can never be admitted: its input alone is about ${tokens} tokens, over the tokensPerDay limit of 20 (apiKey)`,
        details: [{ path: '/input', message: `the input alone is about ${tokens} tokens, over the tokensPerDay limit of 20 (apiKey)` }],
      },
    });
    assert.equal(fake.calls.length, calls);
  });

  test('ratelimit: a rerank counts its query per document and its documents; Cohere (no tokens) keeps the estimate, Voyage settles to its tokens', async () => {
    const { key } = await newKey(gw, { rateLimits: { tokensPerDay: 5000 } });
    const body = { query: 'which one', documents: documents(4) };
    const estimate = await estimateRerankTokens({ model: 'x', ...body });
    const first = await post(gw, '/v1/rerank', key, { model: 'rerank-cohere', ...body });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.headers.get('x-ratelimit-remaining'), String(5000 - estimate));
    const second = await post(gw, '/v1/rerank', key, { model: 'rerank-voyage', ...body });
    assert.equal(second.headers.get('x-ratelimit-remaining'), String(5000 - 2 * estimate));
    const third = await post(gw, '/v1/rerank', key, { model: 'rerank-voyage', ...body });
    assert.equal(third.headers.get('x-ratelimit-remaining'), String(5000 - estimate - VOYAGE_RERANK_TOKENS - estimate));

    const tight = await newKey(gw, { rateLimits: { tokensPerDay: estimate - 1 } });
    const refused = await post(gw, '/v1/rerank', tight.key, { model: 'rerank-cohere', ...body });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'VALIDATION_ERROR');
    assert.deepEqual(refused.body.error.details, [{ path: '/documents', message: `the query with its documents alone is about ${estimate} tokens, over the tokensPerDay limit of ${estimate - 1} (apiKey)` }]);
  });

  test('budget: an embeddings request whose estimate does not fit is refused with 402 BUDGET_EXCEEDED; one that fits is charged its usage', async () => {
    const { id, key } = await newKey(gw);
    const input = ['a few words to embed here'];
    const tokens = await estimateEmbeddingsTokens({ model: 'embed', input });
    // The budget holds exactly the estimate of `input` minus one micro-dollar.
    const limitUsd = (tokens * EMBED_IN - 1) / 1e6;
    const budget = await admin(gw, '/budgets', { scope: 'key', scopeId: id, period: 'daily', limitUsd });
    const calls = fake.calls.length;
    const refused = await post(gw, '/v1/embeddings', key, { model: 'embed', input });
    assert.equal(refused.status, 402, JSON.stringify(refused.body));
    assert.deepEqual(refused.body.error.details, { scope: 'key', scopeId: id, limit: limitUsd, spent: 0, period: 'daily' });
    assert.equal(refused.body.error.code, 'BUDGET_EXCEEDED');
    assert.equal(refused.body.error.message, `Budget exceeded: the daily API key budget has $${limitUsd.toFixed(6)} of $${limitUsd.toFixed(6)} left, and this request may cost up to $${(tokens * EMBED_IN / 1e6).toFixed(6)}`);
    assert.equal(fake.calls.length, calls);

    const small = await post(gw, '/v1/embeddings', key, { model: 'embed', input: 'hi' });
    assert.equal(small.status, 200, JSON.stringify(small.body));
    const spent = (await get(gw, '/v1/budget', key)).data.find((b: any) => b.id === budget.id).spent_usd;
    assert.equal(spent, TOKENS_PER_INPUT * EMBED_IN / 1e6);
  });

  test('budget: a rerank reserves one search unit per hundred documents and is charged the units billed', async () => {
    const { id, key } = await newKey(gw);
    const budget = await admin(gw, '/budgets', { scope: 'key', scopeId: id, period: 'monthly', limitUsd: 0.005 });
    const spent = async () => (await get(gw, '/v1/budget', key)).data.find((b: any) => b.id === budget.id).spent_usd;
    // 201 documents: 3 units, $0.006 estimated, over $0.005.
    const refused = await post(gw, '/v1/rerank', key, { model: 'rerank-cohere', query: 'q', documents: documents(201) });
    assert.equal(refused.status, 402, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'BUDGET_EXCEEDED');
    assert.deepEqual(refused.body.error.details, { scope: 'key', scopeId: id, limit: 0.005, spent: 0, period: 'monthly' });
    assert.equal(await spent(), 0);
    // 200 documents: 2 units fit, and 2 are billed.
    const served = await post(gw, '/v1/rerank', key, { model: 'rerank-cohere', query: 'q', documents: documents(200) });
    assert.equal(served.status, 200, JSON.stringify(served.body));
    assert.equal(await spent(), 2 * SEARCH_UNIT);
    // $0.001 left: a one-unit rerank no longer fits.
    const over = await post(gw, '/v1/rerank', key, { model: 'rerank-cohere', query: 'q', documents: documents(1) });
    assert.equal(over.status, 402, JSON.stringify(over.body));
    assert.equal(over.body.error.details.spent, 0.004);
  });

  test('budget: a token-priced rerank settles to the tokens its provider reports', async () => {
    const { id, key } = await newKey(gw);
    const budget = await admin(gw, '/budgets', { scope: 'key', scopeId: id, period: 'total', limitUsd: 1 });
    const r = await post(gw, '/v1/rerank', key, { model: 'rerank-voyage', query: 'which one', documents: documents(5) });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const row = (await get(gw, '/v1/budget', key)).data.find((b: any) => b.id === budget.id);
    assert.equal(row.spent_usd, VOYAGE_RERANK_TOKENS * VOYAGE_RERANK_IN / 1e6);
  });
});
