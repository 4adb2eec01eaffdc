/**
 * POST /v1/completions as legacy clients send it: the official openai client's completions.create with a prompt,
 * streaming and not, through the gateway to OpenAI's legacy /completions wire (suffix, best_of, echo and an
 * integer logprobs passed on) and, through chat, to a fake of Anthropic's Messages wire (echo by the gateway);
 * fallback past a target without a completions API, and every refusal with its code and envelope.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import { completion, helloStreamEvents, startFakeOpenAI, writeSplit, type FakeHandler, type FakeOpenAI } from '../fakes/openai.ts';
import type { ScriptedAnswer } from '../conformance/fixtures.ts';
import { messagesAnswer, messagesErrorBody, messagesStreamEvents, summarizeMessagesBody } from '../conformance/wires/anthropic.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const CLAUDE = 'claude-sonnet-4-5';
const answer: ScriptedAnswer = { text: 'Hello from Claude.', toolCalls: [], finish: 'stop', usage: { prompt: 12, completion: 5 } };

interface AnthropicRequest { url: string; headers: Record<string, string | string[] | undefined>; body: any }

/** Anthropic's Messages wire (test/conformance/wires/anthropic.ts), answering `answer` or a scripted status. */
async function startFakeAnthropic() {
  const requests: AnthropicRequest[] = [];
  let failWith: number | null = null;
  let scripted = answer;
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString('utf8'));
      requests.push({ url: req.url ?? '', headers: req.headers, body });
      if (failWith !== null) {
        res.writeHead(failWith, { 'content-type': 'application/json' });
        res.end(messagesErrorBody(failWith, `anthropic said ${failWith}`));
      } else if (body.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(messagesStreamEvents(scripted, body).join(''));
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(messagesAnswer(scripted, body)));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    fail(status: number | null) { failWith = status; },
    answer(next: ScriptedAnswer) { scripted = next; },
    reset() { failWith = null; scripted = answer; },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

function config(openaiUrl: string, anthropicUrl: string): string {
  return `
providers:
  openai:
    baseUrl: ${openaiUrl}
    apiKey: sk-upstream-secret
  anthropic:
    baseUrl: ${anthropicUrl}/v1
    apiKey: sk-ant-upstream
models:
  - id: gpt-3.5-turbo-instruct
    provider: openai
  - id: claude
    provider: anthropic
    upstreamModel: ${CLAUDE}
  - id: claude-then-instruct
    strategy: fallback
    targets: [{ provider: anthropic, upstreamModel: ${CLAUDE} }, { provider: openai, upstreamModel: gpt-3.5-turbo-instruct }]
routing:
  retries: 0
upstream:
  breaker:
    volumeThreshold: 1000
`;
}

/** OpenAI's legacy logprobs object for the non-streamed answer. */
const LOGPROBS = { tokens: [' Hello', ' world'], token_logprobs: [-0.5, -0.25], top_logprobs: [{ ' Hello': -0.5 }, { ' world': -0.25 }], text_offset: [9, 15] };

/**
 * OpenAI's legacy wire (POST /completions, `text_completion` answers and SSE chunks, as its API reference
 * documents them), beside its chat wire: the provider echoes the prompt and sends logprobs when asked.
 */
const openAiWire: FakeHandler = async (req, res) => {
  const body = req.body as Record<string, any>;
  if (req.path === '/v1/chat/completions') {
    if (body.stream === true) return writeSplit(res, helloStreamEvents(body));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(completion(String(body.model), 'Hello world')));
    return;
  }
  if (req.path !== '/v1/completions') {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `no route ${req.path}`, type: 'invalid_request_error' } }));
    return;
  }
  const head = { id: 'cmpl-legacy1', object: 'text_completion', created: 1_700_000_000, model: String(body.model) };
  const echo = body.echo === true ? String(body.prompt) : '';
  const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
  const wantLogprobs = typeof body.logprobs === 'number';
  if (body.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...head, choices: [{ text: `${echo} Hello world`, index: 0, logprobs: wantLogprobs ? LOGPROBS : null, finish_reason: 'stop' }], usage }));
    return;
  }
  const piece = (text: string, finish: string | null, logprobs: unknown = null) =>
    ({ ...head, choices: [{ text, index: 0, logprobs, finish_reason: finish }], ...(body.stream_options?.include_usage ? { usage: null } : {}) });
  const events = [
    ...(echo ? [piece(echo, null)] : []),
    piece(' Hello', null, wantLogprobs ? { tokens: [' Hello'], token_logprobs: [-0.5], top_logprobs: [{ ' Hello': -0.5 }], text_offset: [9] } : null),
    piece(' world', null, wantLogprobs ? { tokens: [' world'], token_logprobs: [-0.25], top_logprobs: [{ ' world': -0.25 }], text_offset: [15] } : null),
    piece('', 'stop'),
    ...(body.stream_options?.include_usage ? [{ ...head, choices: [], usage }] : []),
  ].map((event) => `data: ${JSON.stringify(event)}\n\n`);
  return writeSplit(res, [...events, 'data: [DONE]\n\n']);
};

function assertLegacy(body: any, type: string, mention: RegExp): void {
  assert.deepEqual(Object.keys(body), ['error'], JSON.stringify(body));
  assert.deepEqual(Object.keys(body.error).sort(), ['message', 'type'], 'the legacy envelope has no code');
  assert.equal(body.error.type, type);
  assert.match(body.error.message, mention);
}

describe('POST /v1/completions with a legacy prompt', () => {
  let openai: FakeOpenAI;
  let anthropic: Awaited<ReturnType<typeof startFakeAnthropic>>;
  let gw: TestGateway;
  let auth: Record<string, string>;
  let url: string;
  let client: OpenAI;

  before(async () => {
    openai = await startFakeOpenAI();
    anthropic = await startFakeAnthropic();
    gw = await startTestGateway(config(openai.baseUrl, anthropic.url));
    const key = await gw.createKey({ scopes: { capabilities: ['completions'] } });
    auth = { authorization: `Bearer ${key}` };
    url = `${gw.url}/v1/completions`;
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await openai.close();
    await anthropic.close();
  });
  beforeEach(() => {
    openai.reset();
    openai.handle(openAiWire);
    anthropic.reset();
  });

  const upstreamCalls = () => openai.requests.length + anthropic.requests.length;
  const lastOpenAI = () => openai.requests.at(-1)!;
  const lastAnthropic = () => anthropic.requests.at(-1)!;

  describe('the openai client, to the OpenAI fake: its legacy /completions API', () => {
    test('completions.create({ model, prompt }): POST /v1/completions with the prompt and the legacy max_tokens 16; a text_completion back', async () => {
      const { data, response } = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say hello' }).withResponse();
      assert.match(data.id, /^cmpl-/);
      assert.equal(data.object, 'text_completion');
      assert.equal(data.model, 'gpt-3.5-turbo-instruct');
      assert.deepEqual(data.choices, [{ text: ' Hello world', index: 0, logprobs: null, finish_reason: 'stop' }]);
      assert.deepEqual(data.usage, { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
      assert.equal(response.headers.get('x-provider'), 'openai');
      const seen = lastOpenAI();
      assert.equal(seen.path, '/v1/completions');
      assert.equal(seen.headers.authorization, 'Bearer sk-upstream-secret');
      assert.deepEqual(seen.body, { model: 'gpt-3.5-turbo-instruct', prompt: 'Say hello', max_tokens: 16 });
    });

    test('suffix, best_of, echo and an integer logprobs go upstream as sent; the provider\'s echo and logprobs come back once', async () => {
      const data = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'def add(a, b):', suffix: '\n    return c', best_of: 3, echo: true, logprobs: 2, max_tokens: 20 });
      assert.deepEqual(lastOpenAI().body, { model: 'gpt-3.5-turbo-instruct', prompt: 'def add(a, b):', suffix: '\n    return c', best_of: 3, echo: true, logprobs: 2, max_tokens: 20 });
      assert.equal(data.choices.length, 1);
      assert.equal(data.choices[0]!.text, 'def add(a, b): Hello world', 'the prompt is echoed by the provider, not twice');
      assert.deepEqual(data.choices[0]!.logprobs, LOGPROBS);
      assert.equal(data.choices[0]!.finish_reason, 'stop');
    });

    test('streaming: text_completion SSE chunks split at awkward places reach the client as its chunks, with logprobs, ending [DONE]', async () => {
      const stream = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: ['Say hello'], suffix: '!', echo: true, logprobs: 1, stream: true, stream_options: { include_usage: true } });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      assert.equal(chunks.map((c) => c.choices[0]?.text ?? '').join(''), 'Say hello Hello world');
      assert.ok(chunks.every((c) => c.object === 'text_completion' && c.id.startsWith('cmpl-') && c.model === 'gpt-3.5-turbo-instruct'));
      assert.equal(new Set(chunks.map((c) => c.id)).size, 1);
      const texts = chunks.filter((c) => c.choices.length > 0);
      assert.deepEqual(texts.find((c) => c.choices[0]!.text === ' world')!.choices[0]!.logprobs, { tokens: [' world'], token_logprobs: [-0.25], top_logprobs: [{ ' world': -0.25 }], text_offset: [15] });
      assert.equal(texts.at(-1)!.choices[0]!.finish_reason, 'stop');
      assert.deepEqual(chunks.at(-1)!.usage, { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
      const seen = lastOpenAI();
      assert.equal(seen.path, '/v1/completions');
      assert.deepEqual(seen.body, { model: 'gpt-3.5-turbo-instruct', prompt: 'Say hello', suffix: '!', echo: true, logprobs: 1, max_tokens: 16, stream: true, stream_options: { include_usage: true } });
    });

    test('a stream without include_usage: no usage chunk for the client, though usage was asked upstream', async () => {
      const stream = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say hello', stream: true });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      assert.equal(chunks.map((c) => c.choices[0]?.text ?? '').join(''), ' Hello world');
      assert.ok(chunks.every((c) => c.usage === undefined));
      assert.deepEqual(lastOpenAI().body.stream_options, { include_usage: true });
    });

    test('a caller limit wins over the legacy default: max_tokens as sent, max_completion_tokens as max_tokens', async () => {
      await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say hello', max_tokens: 200, temperature: 0.3, stop: ['\n'] });
      assert.deepEqual(lastOpenAI().body, { model: 'gpt-3.5-turbo-instruct', prompt: 'Say hello', max_tokens: 200, temperature: 0.3, stop: ['\n'] });
      const r = await postJson(url, { model: 'gpt-3.5-turbo-instruct', prompt: 'Say hello', max_completion_tokens: 50 }, auth);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(lastOpenAI().body, { model: 'gpt-3.5-turbo-instruct', prompt: 'Say hello', max_tokens: 50 });
    });

    test('the legacy fields that ask for nothing (best_of 1, echo false, suffix null or "", logprobs null) are not sent; n is not sent', async () => {
      await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say hello', best_of: 1, echo: false, suffix: null, logprobs: null, n: 1 });
      assert.deepEqual(lastOpenAI().body, { model: 'gpt-3.5-turbo-instruct', prompt: 'Say hello', max_tokens: 16 });
      const empty = await postJson(url, { model: 'gpt-3.5-turbo-instruct', prompt: 'Say hello', suffix: '' }, auth);
      assert.equal(empty.status, 200);
      assert.equal('suffix' in lastOpenAI().body, false);
    });

    test('a prompt with a chat-only parameter goes through chat, echo done by the gateway; with suffix as well: 400 naming both', async () => {
      const r = await postJson(url, { model: 'gpt-3.5-turbo-instruct', prompt: 'Say hello. ', echo: true, response_format: { type: 'json_object' } }, auth);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.choices[0].text, 'Say hello. Hello world');
      assert.equal(lastOpenAI().path, '/v1/chat/completions');
      assert.deepEqual(lastOpenAI().body.messages, [{ role: 'user', content: 'Say hello. ' }]);
      const before = upstreamCalls();
      const both = await postJson(url, { model: 'gpt-3.5-turbo-instruct', prompt: 'x', suffix: 'y', tools: [{ type: 'function', function: { name: 'f' } }] }, auth);
      assert.equal(both.status, 400);
      assertLegacy(both.body, 'invalid_request_error', /^suffix cannot be sent with tools/);
      assert.equal(upstreamCalls(), before);
    });

    test('the chat form still goes to /chat/completions', async () => {
      const r = await postJson(url, { model: 'gpt-3.5-turbo-instruct', messages: [{ role: 'user', content: 'hi' }] }, auth);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.choices[0].text, 'Hello world');
      assert.equal(lastOpenAI().path, '/v1/chat/completions');
    });

    test('an upstream error of the completions API is mapped as on chat', async () => {
      openai.handle((_req, res) => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'best_of must be greater than n', type: 'invalid_request_error', param: 'best_of' } }));
      });
      const r = await postJson(url, { model: 'gpt-3.5-turbo-instruct', prompt: 'x', best_of: 2 }, auth);
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assertLegacy(r.body, 'invalid_request_error', /best_of must be greater than n/);
    });
  });

  test('fallback: a suffix request skips the Anthropic target (no completions API) and is served by OpenAI\'s /completions', async () => {
    const before = anthropic.requests.length;
    const { data, response } = await client.completions.create({ model: 'claude-then-instruct', prompt: 'def f():', suffix: '\n' }).withResponse();
    assert.equal(data.choices[0]!.text, ' Hello world');
    assert.equal(response.headers.get('x-provider'), 'openai');
    assert.equal(anthropic.requests.length, before, 'no request to the target that cannot insert');
    assert.deepEqual(lastOpenAI().body, { model: 'gpt-3.5-turbo-instruct', prompt: 'def f():', suffix: '\n', max_tokens: 16 });
    // Without a legacy-only field the first target serves it, through its chat API.
    await client.completions.create({ model: 'claude-then-instruct', prompt: 'Say hello' });
    assert.equal(anthropic.requests.length, before + 1);
  });

  describe('the openai client, to an Anthropic Messages fake', () => {
    test('completions.create({ model, prompt }): the prompt is the one user turn, max_tokens 16, the answer a text_completion', async () => {
      const { data, response } = await client.completions.create({ model: 'claude', prompt: 'Say hello' }).withResponse();
      assert.match(data.id, /^cmpl-/);
      assert.equal(data.object, 'text_completion');
      assert.equal(data.model, CLAUDE);
      assert.deepEqual(data.choices, [{ text: 'Hello from Claude.', index: 0, finish_reason: 'stop' }]);
      assert.deepEqual(data.usage, { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
      assert.equal(response.headers.get('x-provider'), 'anthropic');
      assert.equal(response.headers.get('x-model'), CLAUDE);
      const seen = lastAnthropic();
      assert.equal(seen.url, '/v1/messages');
      assert.equal(seen.headers['x-api-key'], 'sk-ant-upstream');
      const summary = summarizeMessagesBody(seen.body);
      assert.deepEqual(summary.turns, [{ role: 'user', text: 'Say hello' }]);
      assert.equal(summary.maxTokens, 16);
      assert.equal(summary.system, null);
      assert.equal(summary.stream, false);
      for (const field of ['prompt', 'echo', 'best_of', 'suffix']) assert.equal(field in seen.body, false, field);
    });

    test('streaming: named Messages events upstream, text_completion chunks to the client, the stop reason at the end', async () => {
      const stream = await client.completions.create({ model: 'claude', prompt: 'Say hello', stream: true });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      assert.equal(chunks.map((c) => c.choices[0]?.text ?? '').join(''), 'Hello from Claude.');
      assert.ok(chunks.every((c) => c.object === 'text_completion' && c.model === CLAUDE));
      assert.equal(chunks.at(-1)!.choices[0]!.finish_reason, 'stop');
      assert.equal(summarizeMessagesBody(lastAnthropic().body).stream, true);
    });

    test('echo and a cut answer: the prompt first, finish_reason length from stop_reason max_tokens', async () => {
      anthropic.answer({ ...answer, text: 'Hello fr', finish: 'length' });
      const plain = await client.completions.create({ model: 'claude', prompt: 'Q: hi\nA:', echo: true, max_tokens: 3 });
      assert.deepEqual(plain.choices, [{ text: 'Q: hi\nA:Hello fr', index: 0, finish_reason: 'length' }]);
      assert.equal(summarizeMessagesBody(lastAnthropic().body).maxTokens, 3);
      const stream = await client.completions.create({ model: 'claude', prompt: 'Q: hi\nA:', echo: true, max_tokens: 3, stream: true });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      assert.equal(chunks[0]!.choices[0]!.text, 'Q: hi\nA:');
      assert.equal(chunks.map((c) => c.choices[0]?.text ?? '').join(''), 'Q: hi\nA:Hello fr');
      assert.equal(chunks.at(-1)!.choices[0]!.finish_reason, 'length');
    });

    test('an upstream failure is 502 in the legacy envelope; the client sees an APIError', async () => {
      anthropic.fail(500);
      const r = await postJson(url, { model: 'claude', prompt: 'Say hello' }, auth);
      assert.equal(r.status, 502);
      assertLegacy(r.body, 'server_error', /anthropic said 500/);
      await assert.rejects(client.completions.create({ model: 'claude', prompt: 'Say hello' }), (err: unknown) => err instanceof OpenAI.APIError && err.status === 502);
    });
  });

  test('suffix, best_of above 1 and an integer logprobs on a provider without a completions API (or with messages): 400 CAPABILITY_NOT_SUPPORTED naming the field, before any I/O', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ suffix: ' and goodbye' }, /^suffix is not supported by provider anthropic/],
      [{ best_of: 2 }, /^best_of above 1 is not supported by provider anthropic/],
      [{ best_of: 20, n: 1 }, /^best_of above 1/],
      [{ logprobs: 0 }, /^logprobs as an integer/],
      [{ logprobs: 5 }, /^logprobs as an integer/],
    ];
    const before = upstreamCalls();
    for (const [extra, message] of cases) {
      const r = await postJson(url, { model: 'claude', prompt: 'Say hello', ...extra }, auth);
      assert.equal(r.status, 400, JSON.stringify(extra));
      assertLegacy(r.body, 'invalid_request_error', message);
    }
    for (const model of ['gpt-3.5-turbo-instruct', 'claude']) {
      // The chat form has no prompt to insert after or score: refused whatever the provider.
      for (const [extra, message] of [[{ suffix: 'x' }, /^suffix is not supported with messages/], [{ best_of: 2 }, /^best_of above 1/], [{ logprobs: 2 }, /^logprobs as an integer/]] as const) {
        const chatForm = await postJson(url, { model, messages: [{ role: 'user', content: 'hi' }], ...extra }, auth);
        assert.equal(chatForm.status, 400);
        assertLegacy(chatForm.body, 'invalid_request_error', message);
      }
    }
    await assert.rejects(
      client.completions.create({ model: 'claude', prompt: 'Say hello', suffix: ' bye' }),
      (err: unknown) => err instanceof OpenAI.BadRequestError && /suffix/.test(err.message),
    );
    assert.equal(upstreamCalls(), before);
  });

  test('bad legacy bodies: 400 VALIDATION_ERROR in the canonical envelope, details naming the field, no upstream call', async () => {
    const model = 'gpt-3.5-turbo-instruct';
    const cases: Array<[unknown, string, RegExp]> = [
      [{ model }, '/messages', /or prompt/],
      [{ model, prompt: 'a', messages: [{ role: 'user', content: 'b' }] }, '/prompt', /cannot be sent with messages/],
      [{ model, prompt: ['one', 'two'] }, '/prompt', /exactly one string, got 2/],
      [{ model, prompt: [] }, '/prompt', /exactly one string, got 0/],
      [{ model, prompt: [1, 2, 3] }, '/prompt', /token arrays/],
      [{ model, prompt: [[1, 2], [3]] }, '/prompt', /token arrays/],
      [{ model, prompt: ['text', 7] }, '/prompt', /token arrays/],
      [{ model, prompt: 42 }, '/prompt', /a string, or an array of one string/],
      [{ model, prompt: null }, '/prompt', /a string, or an array of one string/],
      [{ model, messages: [{ role: 'user', content: 'hi' }], echo: true }, '/echo', /needs prompt/],
      [{ model, prompt: 'x', echo: 'yes' }, '/echo', /boolean/],
      [{ model, prompt: 'x', best_of: 0 }, '/best_of', />= 1/],
      [{ model, prompt: 'x', best_of: 21 }, '/best_of', /<= 20/],
      [{ model, prompt: 'x', best_of: 1.5 }, '/best_of', /integer/],
      [{ model, prompt: 'x', logprobs: 6 }, '/logprobs', /<= 5/],
      [{ model, prompt: 'x', logprobs: -1 }, '/logprobs', />= 0/],
      [{ model, prompt: 'x', suffix: 3 }, '/suffix', /string/],
      [{ model, prompt: 'x', temperature: 3 }, '/temperature', /<= 2/],
      [{ model, prompt: 'x', max_tokens: 0 }, '/max_tokens', />= 1/],
      [{ model, prompt: 'x', top_logprobs: 2 }, '/top_logprobs', /logprobs: true/],
      [{ prompt: 'x' }, '/model', /required/],
    ];
    const before = upstreamCalls();
    for (const [body, path, message] of cases) {
      const r = await postJson(url, body, auth);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.deepEqual(Object.keys(r.body.error).sort(), ['code', 'details', 'message'], JSON.stringify(r.body));
      assert.equal(r.body.error.code, 'VALIDATION_ERROR');
      const issues = r.body.error.details as Array<{ path: string; message: string }>;
      assert.ok(issues.some((d) => d.path === path && message.test(d.message)), `${path} ${message} in ${JSON.stringify(issues)}`);
    }
    await assert.rejects(
      client.completions.create({ model, prompt: ['one', 'two'] }),
      (err: unknown) => err instanceof OpenAI.BadRequestError && /prompt/.test(err.message),
    );
    assert.equal(upstreamCalls(), before);
  });
});
