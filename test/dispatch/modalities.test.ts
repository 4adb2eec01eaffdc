/**
 * The one dispatch serves embeddings as it serves chat: fallback from a failing target to another provider,
 * loadbalance skipping a target without the modality, and a breaker that opens on embeddings failures and then
 * refuses at once (503) without reaching the upstream.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import { sleep, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

function embeddingsAnswer(res: ServerResponse, count = 1) {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ object: 'list', data: Array.from({ length: count }, (_, index) => ({ object: 'embedding', embedding: [index, 0.5], index })), model: 'm', usage: { prompt_tokens: 2, total_tokens: 2 } }));
}
function fail(res: ServerResponse, status = 500) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message: 'boom' } }));
}

describe('embeddings through the one dispatch', () => {
  let first: FakeOpenAI;
  let second: FakeOpenAI;
  let gw: TestGateway;
  let client: OpenAI;
  let key: string;

  beforeEach(async () => {
    first = await startFakeOpenAI();
    second = await startFakeOpenAI();
    gw = await startTestGateway(`
routing:
  retries: 0
upstream:
  breaker:
    volumeThreshold: 3
    errorThresholdPercentage: 50
    resetTimeoutMs: 400
providers:
  openai: { baseUrl: ${first.baseUrl}, apiKey: sk-first }
  together-ai: { baseUrl: ${second.baseUrl}, apiKey: sk-second }
  anthropic: { baseUrl: ${first.baseUrl}, apiKey: sk-anthropic }
models:
  - id: embed
    strategy: fallback
    targets: [{ provider: openai, upstreamModel: text-embedding-3-small }, { provider: together-ai, upstreamModel: BAAI/bge-large-en-v1.5 }]
  - { id: solo, provider: openai, upstreamModel: text-embedding-3-small }
  - id: balanced
    strategy: loadbalance
    targets: [{ provider: anthropic, upstreamModel: claude-sonnet-4-5, weight: 1000 }, { provider: openai, upstreamModel: text-embedding-3-small, weight: 1 }]
pipelines:
  - name: data
    routes: [/v1/embeddings]
    plugins: [auth]
`);
    key = await gw.createKey({ scopes: { capabilities: ['embeddings'] } });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
  });
  afterEach(async () => {
    await gw.close();
    await first.close();
    await second.close();
  });

  test('fallback: a failing first target, the second provider answers (X-Provider, X-Model, its model)', async () => {
    first.handle((_, res) => fail(res));
    second.handle((_, res) => embeddingsAnswer(res, 2));
    const { data, response } = await client.embeddings.create({ model: 'embed', input: ['a', 'b'], encoding_format: 'float' }).withResponse();
    assert.equal(response.headers.get('x-provider'), 'together-ai');
    assert.equal(response.headers.get('x-model'), 'BAAI/bge-large-en-v1.5');
    assert.equal(data.model, 'BAAI/bge-large-en-v1.5');
    assert.deepEqual(data.data.map((d) => d.embedding), [[0, 0.5], [1, 0.5]]);
    assert.equal(first.requests.length, 1);
    // Together documents floats only: no encoding_format is sent, and the caller's default base64 is the gateway's work.
    assert.equal(second.requests[0]!.body.encoding_format, undefined);
    const decoded = await client.embeddings.create({ model: 'embed', input: ['a', 'b'] });
    assert.deepEqual(decoded.data.map((d) => d.embedding), [[0, 0.5], [1, 0.5]]);
  });

  test('loadbalance: a target without embeddings is skipped however heavy its weight', async () => {
    first.handle((_, res) => embeddingsAnswer(res));
    for (let i = 0; i < 3; i++) {
      const res = await postJson(`${gw.url}/v1/embeddings`, { model: 'balanced', input: 'x' }, { authorization: `Bearer ${key}` });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-provider'), 'openai');
    }
  });

  test('a breaker opens on embeddings failures, refuses at once (503), and a probe closes it', async () => {
    first.handle((_, res) => fail(res));
    const call = () => postJson(`${gw.url}/v1/embeddings`, { model: 'solo', input: 'x' }, { authorization: `Bearer ${key}` });
    for (let i = 0; i < 3; i++) assert.equal((await call()).status, 502);
    const readiness = async () => ((await (await fetch(`${gw.url}/readyz`)).json()) as { breakers: Array<{ provider: string; state: string }> }).breakers;
    assert.equal((await readiness()).find((b) => b.provider === 'openai')?.state, 'open');
    const before = first.requests.length;
    const refused = await call();
    assert.equal(refused.status, 503);
    assert.equal(refused.body.error.code, 'UPSTREAM_UNAVAILABLE');
    assert.equal(first.requests.length, before, 'an open breaker does not call the upstream');
    first.handle((_, res) => embeddingsAnswer(res));
    await sleep(450);
    assert.equal((await call()).status, 200);
    assert.equal((await readiness()).find((b) => b.provider === 'openai')?.state, 'closed');
  });
});
