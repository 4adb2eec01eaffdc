/**
 * GET /metrics through an in-process gateway on a loopback fake: after a plain chat, a streamed chat, a 429 from
 * ratelimit, a 402 from budget, an unknown model and a breaker opened by a failing upstream, the scrape holds every
 * series with bounded labels (an unknown model is `other`, no key id anywhere), each plugin's own time, the
 * stream's time to first token, and tokens and cost equal to the usage. Then who may scrape over HTTP (the parts
 * without a gateway are in metrics-units.test.ts).
 */
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { answerEmbeddings } from '../fakes/embedder.ts';
import { completion, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { eventually } from '../helpers/eventually.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { admin, createKey, send } from '../helpers/ratelimit.ts';

/** An address of this host that is not loopback: a request to it arrives from it, as from another machine. */
const outsideAddress = Object.values(networkInterfaces()).flat().find((i) => i?.family === 'IPv4' && !i.internal)?.address;

async function scrapeFrom(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { headers });
  const body = await response.text();
  return { status: response.status, body: response.headers.get('content-type')?.includes('json') ? JSON.parse(body) : body };
}

const TOKEN = 'metrics-token-0123456789';
/** USD per million tokens. */
const IN = 100;
const OUT = 200;

function yaml(openai: string, flaky: string): string {
  return `
server:
  metrics: { token: ${TOKEN} }
routing: { retries: 0 }
upstream:
  breaker: { volumeThreshold: 2, errorThresholdPercentage: 50, resetTimeoutMs: 600000 }
providers:
  openai: { baseUrl: ${openai}, apiKey: sk-upstream-secret }
  together-ai: { baseUrl: ${flaky}, apiKey: sk-flaky }
models:
  - id: priced
    provider: openai
    pricing: { input: ${IN}, output: ${OUT} }
  - id: flaky
    provider: together-ai
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth, ratelimit, budget, usage]
`;
}

interface Sample { name: string; labels: Record<string, string>; value: number }

function parse(text: string): Sample[] {
  return text.split('\n').filter((line) => line && !line.startsWith('#')).map((line) => {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(match, `not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    return { name: match[1]!, labels, value: Number(match[3]) };
  });
}

const find = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
const total = (samples: Sample[], name: string, labels: Record<string, string> = {}) => find(samples, name, labels).reduce((sum, s) => sum + s.value, 0);

describe('GET /metrics after traffic', () => {
  let openai: FakeOpenAI;
  let flaky: FakeOpenAI;
  let gw: TestGateway;
  const lines: Array<Record<string, any>> = [];
  const keys: string[] = [];
  let scrape: Sample[] = [];
  let text = '';

  before(async () => {
    openai = await startFakeOpenAI();
    flaky = await startFakeOpenAI();
    flaky.handle((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'down', type: 'server_error' } }));
    });
    const sink = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } });
    gw = await startTestGateway(yaml(openai.baseUrl, flaky.baseUrl), { logger: pino({ level: 'info' }, sink) });

    const plain = await createKey(gw.url);
    const limited = await createKey(gw.url, { rateLimits: { requestsPerMinute: 1 } });
    const budgeted = await createKey(gw.url);
    keys.push(plain.id, limited.id, budgeted.id, plain.key, limited.key, budgeted.key);
    await admin(gw.url, 'POST', '/budgets', { scope: 'key', scopeId: budgeted.id, period: 'daily', limitUsd: 0.000001 });

    const hello = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });
    assert.equal((await send(gw.url, hello('priced'), plain.key)).status, 200);
    assert.equal((await send(gw.url, hello('priced', { stream: true }), plain.key)).status, 200);
    assert.equal((await send(gw.url, hello('priced'), limited.key)).status, 200);
    assert.equal((await send(gw.url, hello('priced'), limited.key)).status, 429);
    assert.equal((await send(gw.url, hello('priced'), budgeted.key)).status, 402);
    assert.equal((await send(gw.url, hello('no-such-model'), plain.key)).status, 404);
    for (let i = 0; i < 2; i++) assert.equal((await send(gw.url, hello('flaky'), plain.key)).status, 502);
    assert.equal((await send(gw.url, hello('flaky'), plain.key)).status, 503, 'the breaker is open');

    // The outcome is recorded as each response closes: wait until all ten requests are counted.
    await eventually(async () => {
      text = await (await fetch(`${gw.url}/metrics`)).text();
      scrape = parse(text);
      assert.equal(total(scrape, 'aigw_requests_total', { route: '/v1/chat/completions' }), 9);
    });
  });

  after(async () => {
    await gw?.close();
    await openai?.close();
    await flaky?.close();
  });

  test('requests and latency by route, model, provider and status, with bounded labels', () => {
    assert.equal(total(scrape, 'aigw_requests_total', { route: '/v1/chat/completions', model: 'priced', provider: 'openai', status: '200' }), 3);
    assert.equal(total(scrape, 'aigw_requests_total', { model: 'other', provider: 'other', status: '429' }), 1, 'refused before the body was read');
    assert.equal(total(scrape, 'aigw_requests_total', { model: 'priced', provider: 'other', status: '402' }), 1);
    assert.equal(total(scrape, 'aigw_requests_total', { model: 'other', provider: 'other', status: '404' }), 1, 'an unknown model is `other`');
    assert.equal(total(scrape, 'aigw_requests_total', { model: 'flaky', provider: 'together-ai', status: '502' }), 2, 'the provider a call failed on');
    assert.equal(total(scrape, 'aigw_requests_total', { model: 'flaky', provider: 'together-ai', status: '503' }), 1);
    assert.equal(total(scrape, 'aigw_request_duration_seconds_count', { route: '/v1/chat/completions' }), 9);
    assert.ok(!text.includes('no-such-model'), 'a model a caller made up is never a label');
    for (const key of keys) assert.ok(!text.includes(key), 'no key id or key appears in the scrape');
    for (const sample of scrape) {
      if (sample.labels.route !== undefined) assert.ok(['/v1/chat/completions', '/metrics', 'other'].includes(sample.labels.route), sample.labels.route);
      if (sample.labels.model !== undefined) assert.ok(['priced', 'flaky', 'other'].includes(sample.labels.model), sample.labels.model);
      if (sample.labels.provider !== undefined) assert.ok(['openai', 'together-ai', 'other'].includes(sample.labels.provider), sample.labels.provider);
    }
  });

  test('overhead: the total and each plugin\'s own time', () => {
    const parts = new Set(find(scrape, 'aigw_gateway_overhead_seconds_count').map((s) => s.labels.part));
    assert.deepEqual([...parts].sort(), ['plugin:auth', 'plugin:budget', 'plugin:ratelimit', 'plugin:usage', 'total']);
    assert.equal(total(scrape, 'aigw_gateway_overhead_seconds_count', { part: 'total' }), 9);
    // ratelimit refused one request before budget ran: budget and usage ran for one request fewer.
    assert.equal(total(scrape, 'aigw_gateway_overhead_seconds_count', { part: 'plugin:ratelimit' }), 9);
    assert.equal(total(scrape, 'aigw_gateway_overhead_seconds_count', { part: 'plugin:budget' }), 8);
    const overhead = total(scrape, 'aigw_gateway_overhead_seconds_sum', { part: 'total' });
    const duration = total(scrape, 'aigw_request_duration_seconds_sum', { route: '/v1/chat/completions' });
    assert.ok(overhead > 0 && overhead < duration, `overhead ${overhead} within the duration ${duration}`);
  });

  test('upstream latency, time to first token of the stream, tokens and cost equal to the usage', () => {
    assert.equal(total(scrape, 'aigw_upstream_duration_seconds_count', { provider: 'openai', model: 'priced' }), 3);
    assert.equal(total(scrape, 'aigw_upstream_duration_seconds_count', { provider: 'together-ai', model: 'flaky' }), 3, 'failed calls count too');
    assert.equal(total(scrape, 'aigw_upstream_time_to_first_token_seconds_count', { provider: 'openai', model: 'priced' }), 1);
    // The fake reports 9 prompt tokens and 2 completion tokens, plain and streamed, on each of three answers.
    assert.equal(total(scrape, 'aigw_tokens_total', { model: 'priced', provider: 'openai', direction: 'input' }), 27);
    assert.equal(total(scrape, 'aigw_tokens_total', { model: 'priced', provider: 'openai', direction: 'output' }), 6);
    const cost = total(scrape, 'aigw_cost_usd_total', { model: 'priced', provider: 'openai' });
    assert.ok(Math.abs(cost - (27 * IN + 6 * OUT) / 1e6) < 1e-12, `cost ${cost}`);
  });

  test('refusals by level, breaker states, pools, connections, in-flight', () => {
    assert.equal(total(scrape, 'aigw_limit_refusals_total', { code: 'RATE_LIMIT_EXCEEDED', level: 'apiKey' }), 1);
    assert.equal(total(scrape, 'aigw_limit_refusals_total', { code: 'BUDGET_EXCEEDED', level: 'key' }), 1);
    assert.equal(total(scrape, 'aigw_circuit_breakers', { provider: 'together-ai', state: 'open' }), 1);
    assert.equal(total(scrape, 'aigw_circuit_breakers', { provider: 'openai', state: 'closed' }), 1);
    assert.ok(total(scrape, 'aigw_connections_open') >= 1);
    assert.equal(total(scrape, 'aigw_requests_in_flight'), 1, 'the scrape itself');
    assert.equal(total(scrape, 'aigw_store_stalled', { store: 'kv' }), 0);
    // A pool is listed only while it holds or queues requests: none does between requests.
    assert.ok(text.includes('# TYPE aigw_upstream_pool_requests gauge'));
    for (const name of ['aigw_cache_hits_total', 'aigw_store_unavailable_total', 'aigw_store_stalls_total', 'aigw_connections_refused_total']) {
      assert.ok(text.includes(`# TYPE ${name} counter`), name);
    }
  });

  test('the access line explains each request', async () => {
    const access = lines.filter((line) => line.msg === 'request' && line.path === '/v1/chat/completions');
    assert.equal(access.length, 9);
    const [first] = access;
    assert.equal(first!.keyId, keys[0]);
    assert.equal(first!.tenant, 'default');
    assert.equal(first!.model, 'priced');
    assert.equal(first!.provider, 'openai');
    assert.deepEqual(first!.tokens, { input: 9, output: 2 });
    assert.ok(Math.abs(first!.cost - (9 * IN + 2 * OUT) / 1e6) < 1e-12);
    assert.ok(typeof first!.overheadMs === 'number' && first!.overheadMs >= 0 && first!.overheadMs <= first!.ms);
    assert.equal(first!.code, undefined, 'a success has no error code');
    const limited = access.find((line) => line.status === 429)!;
    assert.equal(limited.code, 'RATE_LIMIT_EXCEEDED');
    assert.equal(limited.keyId, keys[1]);
    assert.equal(limited.tokens, undefined);
    const failed = access.find((line) => line.status === 502)!;
    assert.equal(failed.code, 'UPSTREAM_ERROR');
    assert.equal(failed.upstreamStatus, 500);
    const refusals = lines.filter((line) => line.refusals !== undefined);
    assert.deepEqual(refusals.map((line) => [line.code, line.level, line.tenant, line.refusals]).sort(), [['BUDGET_EXCEEDED', 'key', 'default', 1], ['RATE_LIMIT_EXCEEDED', 'apiKey', 'default', 1]]);
  });

  test('over HTTP from a non-loopback address: the token is served, a wrong one, none or a forged X-Forwarded-For refused', { skip: outsideAddress ? false : 'this host has no non-loopback IPv4 address' }, async () => {
    const url = `http://${outsideAddress}:${new URL(gw.url).port}/metrics`;
    const served = await scrapeFrom(url, { authorization: `Bearer ${TOKEN}` });
    assert.equal(served.status, 200);
    assert.match(served.body, /^aigw_requests_total\{/m);
    const wrong = await scrapeFrom(url, { authorization: 'Bearer wrong-token-0123456789' });
    assert.deepEqual([wrong.status, wrong.body.error.code], [401, 'AUTH_INVALID_TOKEN']);
    const none = await scrapeFrom(url);
    assert.deepEqual([none.status, none.body.error.code], [401, 'AUTH_REQUIRED']);
    const forged = await scrapeFrom(url, { 'x-forwarded-for': '127.0.0.1' });
    assert.equal(forged.status, 401, 'X-Forwarded-For is never read');
  });
});

describe('metrics without a token, and turned off', () => {
  let openai: FakeOpenAI;
  before(async () => {
    openai = await startFakeOpenAI();
  });
  after(() => openai?.close());

  test('without a token: loopback is served, any other address gets 403 in the canonical envelope', async () => {
    const gw = await startTestGateway(yaml(openai.baseUrl, openai.baseUrl).replace(`  metrics: { token: ${TOKEN} }`, '  accessLog: false'));
    try {
      assert.equal((await scrapeFrom(`${gw.url}/metrics`)).status, 200);
      if (!outsideAddress) return;
      const refused = await scrapeFrom(`http://${outsideAddress}:${new URL(gw.url).port}/metrics`, { authorization: `Bearer ${TOKEN}` });
      assert.equal(refused.status, 403);
      assert.deepEqual(Object.keys(refused.body.error).sort(), ['code', 'details', 'message']);
      assert.equal(refused.body.error.code, 'AUTH_FORBIDDEN');
    } finally {
      await gw.close();
    }
  });

  test('enabled: false: no route', async () => {
    const gw = await startTestGateway(yaml(openai.baseUrl, openai.baseUrl).replace(`metrics: { token: ${TOKEN} }`, 'metrics: { enabled: false }'));
    try {
      const answer = await scrapeFrom(`${gw.url}/metrics`);
      assert.deepEqual([answer.status, answer.body.error.code], [404, 'NOT_FOUND']);
    } finally {
      await gw.close();
    }
  });
});

describe('a semantic-cache hit', () => {
  test('is counted by kind, and its tokens and cost are not (no provider served it)', async () => {
    const fake = await startFakeOpenAI();
    fake.handle((req, res) => {
      if (req.path.endsWith('/embeddings')) return answerEmbeddings(res, req.body);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(completion(String(req.body.model), 'Hello world')));
    });
    const lines: Array<Record<string, any>> = [];
    const sink = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } });
    const gw = await startTestGateway(`
providers:
  openai: { baseUrl: ${fake.baseUrl}, apiKey: sk-upstream-secret }
models:
  - { id: priced, provider: openai, pricing: { input: ${IN}, output: ${OUT} } }
  - { id: embed, provider: openai }
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth, { semantic-cache: { embeddingModel: embed, threshold: 0.85 } }, usage]
`, { logger: pino({ level: 'info' }, sink) });
    try {
      const { key } = await createKey(gw.url);
      const body = { model: 'priced', messages: [{ role: 'user', content: 'What is the capital of France?' }] };
      for (let i = 0; i < 2; i++) assert.equal((await send(gw.url, body, key)).status, 200);
      let samples: Sample[] = [];
      await eventually(async () => {
        samples = parse(await (await fetch(`${gw.url}/metrics`)).text());
        assert.equal(total(samples, 'aigw_requests_total', { route: '/v1/chat/completions' }), 2);
      });
      assert.equal(total(samples, 'aigw_cache_hits_total', { route: '/v1/chat/completions', kind: 'exact' }), 1);
      assert.equal(total(samples, 'aigw_tokens_total', { model: 'priced', direction: 'input' }), 9, 'the first answer only');
      assert.equal(total(samples, 'aigw_upstream_duration_seconds_count', { model: 'priced' }), 1);
      const access = lines.filter((line) => line.msg === 'request' && line.path === '/v1/chat/completions');
      assert.deepEqual(access.map((line) => [line.cache, line.tokens]), [[undefined, { input: 9, output: 2 }], ['exact', undefined]]);
    } finally {
      await gw.close();
      await fake.close();
    }
  });
});
