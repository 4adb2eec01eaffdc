/** Dispatch: client aborts reach the upstream, breakers open and recover, fallbacks, timeouts. */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { chunk, sleep, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { chatConfig, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const hello = (model = 'plain', stream = false) => ({ model, stream, messages: [{ role: 'user', content: 'hi' }] });

async function waitFor(condition: () => boolean, ms = 2000): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await sleep(10);
  }
}

describe('client disconnects abort the upstream request', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let key: string;
  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(chatConfig(fake.baseUrl));
    key = await gw.createKey();
  });
  after(async () => {
    await gw.close();
    await fake.close();
  });

  test('mid-stream: the upstream connection closes before the upstream finished', async () => {
    fake.handle(async (req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 200 && !res.destroyed; i++) {
        res.write(`data: ${JSON.stringify(chunk(String(req.body.model), { content: `w${i} ` }))}\n\n`);
        await sleep(20);
      }
      res.end('data: [DONE]\n\n');
    });
    try {
      const controller = new AbortController();
      const response = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST', signal: controller.signal,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(hello('plain', true)),
      });
      const reader = response.body!.getReader();
      await reader.read();
      controller.abort();
      const seen = fake.requests.at(-1)!;
      await waitFor(() => seen.aborted);
      assert.equal(seen.aborted, true);
    } finally {
      fake.reset();
    }
  });

  test('while waiting for the upstream answer: the upstream request is aborted too', async () => {
    fake.handle(async (_req, res) => {
      await sleep(3000);
      if (!res.destroyed) res.end('{}');
    });
    try {
      const req = httpRequest(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });
      req.on('error', () => {});
      req.end(JSON.stringify(hello()));
      await waitFor(() => fake.requests.length > 0 && fake.requests.at(-1)!.body.model === 'plain' && !fake.requests.at(-1)!.aborted);
      const seen = fake.requests.at(-1)!;
      req.destroy();
      await waitFor(() => seen.aborted);
      assert.equal(seen.aborted, true);
    } finally {
      fake.reset();
    }
  });
});

describe('circuit breaker per upstream', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let key: string;
  const breaker = `
routing:
  retries: 0
upstream:
  breaker:
    volumeThreshold: 3
    errorThresholdPercentage: 50
    resetTimeoutMs: 400
`;
  // A fresh breaker per test: answered 400s count as successes in the rolling window, which would
  // otherwise dilute the next test's failure percentage.
  beforeEach(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(chatConfig(fake.baseUrl, breaker));
    key = await gw.createKey();
  });
  afterEach(async () => {
    await gw.close();
    await fake.close();
  });
  const call = () => postJson(`${gw.url}/v1/chat/completions`, hello(), { authorization: `Bearer ${key}` });
  const readiness = async () => ((await (await fetch(`${gw.url}/readyz`)).json()) as { breakers: Array<{ provider: string; state: string }> }).breakers;

  test('caller errors (400) never trip it', async () => {
    fake.handle((_, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'bad param' } }));
    });
    for (let i = 0; i < 8; i++) assert.equal((await call()).status, 400);
    assert.equal((await readiness())[0]?.state, 'closed');
  });

  test('repeated 500s open it (503 without reaching the upstream); after the reset timeout a probe closes it', async () => {
    fake.handle((_, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'boom' } }));
    });
    for (let i = 0; i < 3; i++) assert.equal((await call()).status, 502);
    assert.equal((await readiness())[0]?.state, 'open');
    const before = fake.requests.length;
    const refused = await call();
    assert.equal(refused.status, 503);
    assert.equal(refused.body.error.code, 'UPSTREAM_UNAVAILABLE');
    assert.equal(fake.requests.length, before, 'an open breaker does not call the upstream');

    fake.reset();
    await sleep(450);
    assert.equal((await readiness())[0]?.state, 'half-open');
    const probe = await call();
    assert.equal(probe.status, 200);
    assert.equal((await readiness())[0]?.state, 'closed');
    assert.equal((await call()).status, 200);
  });
});

describe('fallback and timeouts', () => {
  let good: FakeOpenAI;
  let bad: FakeOpenAI;
  let gw: TestGateway;
  let key: string;
  before(async () => {
    good = await startFakeOpenAI();
    bad = await startFakeOpenAI();
    bad.handle((_, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'first target down' } }));
    });
    // Two providers are needed for two base URLs; a third-party translator of the same wire format stands in.
    const files = {
      'openai-two.mjs': `import openai from ${JSON.stringify(new URL('../../providers/openai/index.ts', import.meta.url).href)};\nexport default { ...openai, slug: 'openai-two', displayName: 'Second OpenAI' };\n`,
    };
    gw = await startTestGateway(`
providerPackages: [./openai-two.mjs]
providers:
  openai:
    baseUrl: ${bad.baseUrl}
    apiKey: sk-bad
  openai-two:
    baseUrl: ${good.baseUrl}
    apiKey: sk-good
upstream:
  headersTimeoutMs: 300
models:
  - id: resilient
    targets:
      - provider: openai
        upstreamModel: model-a
      - provider: openai-two
        upstreamModel: model-b
  - id: slow
    provider: openai-two
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth]
`, { files });
    key = await gw.createKey();
  });
  after(async () => {
    await gw.close();
    await good.close();
    await bad.close();
  });

  test('a 500 from the first target is served by the second', async () => {
    const r = await postJson(`${gw.url}/v1/chat/completions`, hello('resilient'), { authorization: `Bearer ${key}` });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('x-provider'), 'openai-two');
    assert.equal(r.headers.get('x-model'), 'model-b');
    assert.equal(bad.requests.at(-1)?.body.model, 'model-a');
    assert.equal(good.requests.at(-1)?.headers.authorization, 'Bearer sk-good');
  });

  test('no response headers within headersTimeoutMs: 504 UPSTREAM_TIMEOUT', async () => {
    good.handle(async (_req, res) => {
      await sleep(1000);
      if (!res.destroyed) res.end('{}');
    });
    try {
      const r = await postJson(`${gw.url}/v1/chat/completions`, hello('slow'), { authorization: `Bearer ${key}` });
      assert.equal(r.status, 504);
      assert.equal(r.body.error.code, 'UPSTREAM_TIMEOUT');
    } finally {
      good.reset();
    }
  });

  test('an upstream that dies mid-stream ends the stream with an error event, not a hang', async () => {
    good.handle(async (req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk(String(req.body.model), { content: 'partial' }))}\n\n`);
      await sleep(20);
      res.destroy();
    });
    try {
      const response = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(hello('slow', true)),
      });
      const text = await response.text();
      assert.match(text, /partial/);
      assert.match(text, /"code":"UPSTREAM_ERROR"/);
      assert.doesNotMatch(text, /\[DONE\]/);
    } finally {
      good.reset();
    }
  });
});
