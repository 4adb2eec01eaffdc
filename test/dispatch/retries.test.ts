/** Retries before the first byte, fallback on failures another target may not share, and usage estimates. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chunk, completion, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { chatConfig, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const hello = (model = 'plain', extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'Say hello to the world' }], ...extra });
const fail = (status: number) => (_req: unknown, res: import('node:http').ServerResponse) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message: `scripted ${status}` } }));
};

describe('retries on the same target', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let auth: Record<string, string>;
  before(async () => {
    fake = await startFakeOpenAI();
    // The breaker stays out of the way: these tests count attempts, not breaker decisions.
    gw = await startTestGateway(chatConfig(fake.baseUrl, 'routing:\n  retries: 2\n  backoffMs: 5\n  maxBackoffMs: 20\nupstream:\n  breaker:\n    volumeThreshold: 1000\n'));
    auth = { authorization: `Bearer ${await gw.createKey()}` };
  });
  after(async () => {
    await gw.close();
    await fake.close();
  });

  test('a 500 then a 200: the caller gets the 200', async () => {
    let calls = 0;
    fake.handle((req, res) => {
      calls++;
      if (calls === 1) return fail(500)(req, res);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(completion(String(req.body.model), 'second time lucky')));
    });
    const answer = await postJson(`${gw.url}/v1/chat/completions`, hello(), auth);
    fake.reset();
    assert.equal(answer.status, 200);
    assert.equal(answer.body.choices[0].message.content, 'second time lucky');
    assert.equal(calls, 2);
  });

  test('every attempt fails: retries + 1 requests, then 502', async () => {
    let calls = 0;
    fake.handle((req, res) => {
      calls++;
      fail(503)(req, res);
    });
    const answer = await postJson(`${gw.url}/v1/chat/completions`, hello(), auth);
    fake.reset();
    assert.equal(answer.status, 502);
    assert.equal(answer.body.error.code, 'UPSTREAM_ERROR');
    assert.equal(calls, 3);
  });

  test('caller errors and a refused gateway credential are not retried on the same target', async () => {
    for (const status of [400, 401, 404]) {
      let calls = 0;
      fake.handle((req, res) => {
        calls++;
        fail(status)(req, res);
      });
      await postJson(`${gw.url}/v1/chat/completions`, hello(), auth);
      assert.equal(calls, 1, `status ${status}`);
    }
    fake.reset();
  });

  test('429 is retried', async () => {
    let calls = 0;
    fake.handle((req, res) => {
      calls++;
      if (calls < 3) return fail(429)(req, res);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(completion(String(req.body.model), 'ok')));
    });
    const answer = await postJson(`${gw.url}/v1/chat/completions`, hello(), auth);
    fake.reset();
    assert.equal(answer.status, 200);
    assert.equal(calls, 3);
  });
});

describe('fallback to the next target', () => {
  let bad: FakeOpenAI;
  let good: FakeOpenAI;
  let gw: TestGateway;
  let auth: Record<string, string>;
  before(async () => {
    bad = await startFakeOpenAI();
    good = await startFakeOpenAI();
    const files = {
      'openai-two.mjs': `import openai from ${JSON.stringify(new URL('../../providers/openai/index.ts', import.meta.url).href)};\nexport default { ...openai, slug: 'openai-two', displayName: 'Second OpenAI' };\n`,
    };
    gw = await startTestGateway(`
providerPackages: [./openai-two.mjs]
routing:
  retries: 1
  backoffMs: 1
providers:
  openai:
    baseUrl: ${bad.baseUrl}
    apiKey: sk-wrong
  openai-two:
    baseUrl: ${good.baseUrl}
    apiKey: sk-right
models:
  - id: duo
    targets:
      - provider: openai
      - provider: openai-two
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth]
`, { files });
    auth = { authorization: `Bearer ${await gw.createKey()}` };
  });
  after(async () => {
    await gw.close();
    await bad.close();
    await good.close();
  });

  test('a refused credential moves on to the next target at once', async () => {
    bad.handle(fail(401));
    const before = bad.requests.length;
    const answer = await postJson(`${gw.url}/v1/chat/completions`, hello('duo'), auth);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('x-provider'), 'openai-two');
    assert.equal(bad.requests.length - before, 1, 'no retry on the target whose credential was refused');
  });

  test('a caller error is not tried elsewhere: the next target would refuse it too', async () => {
    bad.handle(fail(400));
    const goodBefore = good.requests.length;
    const answer = await postJson(`${gw.url}/v1/chat/completions`, hello('duo'), auth);
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error.code, 'UPSTREAM_BAD_REQUEST');
    assert.equal(good.requests.length, goodBefore);
  });
});

describe('usage estimates when the provider reports none', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let auth: Record<string, string>;
  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(chatConfig(fake.baseUrl));
    auth = { authorization: `Bearer ${await gw.createKey()}` };
  });
  after(async () => {
    await gw.close();
    await fake.close();
  });

  test('a completion without usage gets an estimate', async () => {
    fake.handle((req, res) => {
      const { usage: _none, ...body } = completion(String(req.body.model), 'Hello world');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    const answer = await postJson(`${gw.url}/v1/chat/completions`, hello(), auth);
    fake.reset();
    assert.equal(answer.status, 200);
    const usage = answer.body.usage as { prompt_tokens: number; completion_tokens: number; total_tokens: number };
    // "Hello world" is 2 tokens in o200k_base; the prompt is its text plus the chat format's overhead.
    assert.equal(usage.completion_tokens, 2);
    assert.ok(usage.prompt_tokens > 5 && usage.prompt_tokens < 30, `prompt_tokens ${usage.prompt_tokens}`);
    assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
  });

  test('a stream without a usage chunk ends with an estimated one', async () => {
    fake.handle((req, res) => {
      const model = String(req.body.model);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const c of [chunk(model, { role: 'assistant', content: '' }), chunk(model, { content: 'Hello' }), chunk(model, { content: ' world' }), chunk(model, {}, 'stop')]) {
        res.write(`data: ${JSON.stringify(c)}\n\n`);
      }
      res.end('data: [DONE]\n\n');
    });
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(hello('plain', { stream: true, stream_options: { include_usage: true } })),
    });
    const text = await response.text();
    fake.reset();
    const events = text.split('\n\n').filter((e) => e.startsWith('data: ') && e !== 'data: [DONE]').map((e) => JSON.parse(e.slice(6)));
    const last = events.at(-1);
    assert.deepEqual(last.choices, []);
    assert.equal(last.usage.completion_tokens, 2);
    assert.ok(text.endsWith('data: [DONE]\n\n'));
  });
});
