/**
 * POST /v1/completions: the chat body, answered in the legacy text form, through the gateway to the OpenAI fake,
 * with the official openai client's raw request and plain fetch. The legacy prompt form is in legacy-completions.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import { chunk, completion, startFakeOpenAI, writeSplit, type FakeOpenAI } from '../fakes/openai.ts';
import { chatConfig, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const UPSTREAM_MODEL = 'gpt-4o-mini-2024-07-18';
const hello = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] };
const CONFIG = 'routing:\n  retries: 0\nupstream:\n  breaker:\n    volumeThreshold: 1000\n';

interface TextCompletion {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: Array<{ text: string; index: number; finish_reason: string | null }>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

/** The `data:` payloads of an event stream, [DONE] kept as the string. */
async function dataEvents(response: Response): Promise<Array<any>> {
  const text = await response.text();
  return text.split('\n\n').filter((b) => b.trim() !== '').map((block) => {
    assert.ok(!block.startsWith('event:'), 'unnamed events only');
    const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
    return data === '[DONE]' ? data : JSON.parse(data);
  });
}

function assertLegacy(body: any, type: string): void {
  assert.deepEqual(Object.keys(body), ['error'], JSON.stringify(body));
  assert.deepEqual(Object.keys(body.error).sort(), ['message', 'type'], 'no code field');
  assert.equal(body.error.type, type);
  assert.equal(typeof body.error.message, 'string');
}

function assertCanonical(body: any, code: string): void {
  assert.deepEqual(Object.keys(body), ['error'], JSON.stringify(body));
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'details', 'message']);
  assert.equal(body.error.code, code, JSON.stringify(body));
}

describe('POST /v1/completions', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let key: string;
  let auth: Record<string, string>;
  let url: string;
  let client: OpenAI;

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(chatConfig(fake.baseUrl, CONFIG));
    key = await gw.createKey({ scopes: { capabilities: ['completions'] } });
    auth = { authorization: `Bearer ${key}` };
    url = `${gw.url}/v1/completions`;
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const sent = () => fake.requests.at(-1)!.body as Record<string, any>;

  test('the legacy shape: cmpl- id, text_completion, one choice, usage, the routed model and the routing headers', async () => {
    const { data, response } = await client.post<TextCompletion>('/completions', { body: hello }).withResponse();
    assert.match(data.id, /^cmpl-/);
    assert.equal(data.object, 'text_completion');
    assert.ok(Number.isInteger(data.created));
    assert.equal(data.model, UPSTREAM_MODEL);
    assert.deepEqual(data.choices, [{ text: 'Hello world', index: 0, finish_reason: 'stop' }]);
    assert.deepEqual(data.usage, { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 });
    assert.deepEqual(Object.keys(data).sort(), ['choices', 'created', 'id', 'model', 'object', 'usage']);
    assert.match(response.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(response.headers.get('x-provider'), 'openai');
    assert.equal(response.headers.get('x-model'), UPSTREAM_MODEL);
    const seen = fake.requests.at(-1)!;
    assert.equal(seen.path, '/v1/chat/completions');
    assert.deepEqual(seen.body, { ...hello, model: UPSTREAM_MODEL });
  });

  test('the body is the chat schema: what chat accepts is accepted and passed on (temperature 1.5, tools, stop, ...)', async () => {
    const body = {
      ...hello, temperature: 1.5, top_p: 0.5, max_tokens: 20, stop: ['END'], seed: 7, user: 'u1', presence_penalty: 1,
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }], tool_choice: 'auto',
      response_format: { type: 'text' }, logprobs: true, top_logprobs: 2,
    };
    const r = await postJson(url, body, auth);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(sent(), { ...body, model: UPSTREAM_MODEL });
  });

  test('finish_reason is passed through; a tool-call answer has empty text', async () => {
    fake.handle((req, res) => {
      const body = completion(String(req.body.model), 'cut sh');
      body.choices[0]!.finish_reason = 'length';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    const r = await postJson(url, hello, auth);
    assert.deepEqual(r.body.choices, [{ text: 'cut sh', index: 0, finish_reason: 'length' }]);
    fake.handle((req, res) => {
      const body = completion(String(req.body.model), '');
      Object.assign(body.choices[0]!, { message: { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'tool_calls' });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    const tools = await postJson(url, hello, auth);
    assert.deepEqual(tools.body.choices, [{ text: '', index: 0, finish_reason: 'tool_calls' }]);
  });

  test('n > 1 is accepted (the chat schema allows 1 to 10) but not sent upstream: one choice, generated once', async () => {
    const r = await postJson(url, { ...hello, n: 3 }, auth);
    assert.equal(r.status, 200);
    assert.equal(r.body.choices.length, 1);
    assert.equal('n' in sent(), false);
    const tooMany = await postJson(url, { ...hello, n: 11 }, auth);
    assert.equal(tooMany.status, 400);
    assertCanonical(tooMany.body, 'VALIDATION_ERROR');
  });

  test('streaming: text_completion chunks with one choice at index 0, then [DONE]; usage only when asked for', async () => {
    const response = await fetch(url, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ ...hello, stream: true }) });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    assert.equal(response.headers.get('x-provider'), 'openai');
    assert.equal(response.headers.get('x-model'), UPSTREAM_MODEL);
    const events = await dataEvents(response);
    assert.equal(events.at(-1), '[DONE]');
    const chunks = events.slice(0, -1) as TextCompletion[];
    assert.ok(chunks.length >= 2);
    for (const c of chunks) {
      assert.match(c.id, /^cmpl-/);
      assert.equal(c.object, 'text_completion');
      assert.ok(Number.isInteger(c.created));
      assert.equal(c.model, UPSTREAM_MODEL);
      assert.equal(c.choices.length, 1);
      assert.equal(c.choices[0]!.index, 0);
      assert.deepEqual(Object.keys(c.choices[0]!).sort(), ['finish_reason', 'index', 'text']);
      assert.equal(c.usage, undefined);
    }
    assert.equal(chunks.map((c) => c.choices[0]!.text).join(''), 'Hello world');
    assert.deepEqual(chunks.map((c) => c.choices[0]!.finish_reason), [...chunks.slice(1).map(() => null), 'stop']);
    assert.equal(new Set(chunks.map((c) => c.id)).size, 1, 'one id per stream');

    const withUsage = await fetch(url, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ ...hello, stream: true, stream_options: { include_usage: true } }) });
    const usageEvents = await dataEvents(withUsage);
    assert.deepEqual(usageEvents.at(-2).choices, []);
    assert.deepEqual(usageEvents.at(-2).usage, { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 });
  });

  test('streaming through the openai client raw request', async () => {
    const stream = await client.post<TextCompletion>('/completions', { body: { ...hello, stream: true }, stream: true }) as unknown as AsyncIterable<TextCompletion>;
    let text = '';
    for await (const c of stream) text += c.choices[0]?.text ?? '';
    assert.equal(text, 'Hello world');
  });

  test('a failure after the stream started: a last data event in the legacy envelope, and no [DONE]', async () => {
    fake.handle((req, res) => writeSplit(res, [
      `data: ${JSON.stringify(chunk(String(req.body.model), { content: 'Hel' }))}\n\n`,
      `data: ${JSON.stringify({ error: { message: 'the model crashed', type: 'server_error' } })}\n\n`,
    ]));
    const response = await fetch(url, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ ...hello, stream: true }) });
    const events = await dataEvents(response);
    assert.equal(events[0].choices[0].text, 'Hel');
    assert.ok(!events.includes('[DONE]'));
    assertLegacy(events.at(-1), 'server_error');
    assert.match(events.at(-1).error.message, /the model crashed/);
  });

  test('validation failures: 400 VALIDATION_ERROR in the canonical envelope, and no upstream call', async () => {
    const cases: Array<[unknown, string]> = [
      [{ model: 'gpt-4o-mini' }, '/messages'],
      [{ ...hello, prompt: 'Say hello' }, '/prompt'],
      [{ ...hello, messages: [] }, '/messages'],
      [{ messages: hello.messages }, '/model'],
      [{ ...hello, temperature: 2.5 }, '/temperature'],
      [{ ...hello, top_logprobs: 3 }, '/top_logprobs'],
    ];
    const before = fake.requests.length;
    for (const [body, path] of cases) {
      const r = await postJson(url, body, auth);
      assert.equal(r.status, 400, JSON.stringify(body));
      assertCanonical(r.body, 'VALIDATION_ERROR');
      assert.ok(r.body.error.details.some((d: { path: string }) => d.path === path), `${path} in ${JSON.stringify(r.body.error.details)}`);
    }
    assert.equal(fake.requests.length, before);
  });

  test('runtime errors use the legacy envelope without code: unknown model 404, upstream 500 -> 502, upstream 400 -> 400', async () => {
    const unknown = await postJson(url, { ...hello, model: 'gpt-9' }, auth);
    assert.equal(unknown.status, 404);
    assertLegacy(unknown.body, 'invalid_request_error');
    for (const [upstream, status, type] of [[500, 502, 'server_error'], [400, 400, 'invalid_request_error']] as const) {
      fake.handle((_, res) => {
        res.writeHead(upstream, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `upstream said ${upstream}`, type: 'x' } }));
      });
      const r = await postJson(url, hello, auth);
      assert.equal(r.status, status);
      assertLegacy(r.body, type);
      assert.match(r.body.error.message, new RegExp(`upstream said ${upstream}`));
    }
    await assert.rejects(client.post('/completions', { body: hello }), (err: unknown) => err instanceof OpenAI.APIError && err.status === 400);
  });

  test('credentials and capability stay canonical: 401 without a key, 403 for a chat-only key', async () => {
    const anonymous = await postJson(url, hello);
    assert.equal(anonymous.status, 401);
    assertCanonical(anonymous.body, 'AUTH_REQUIRED');
    const chatOnly = await gw.createKey({ scopes: { capabilities: ['chat'] } });
    const forbidden = await postJson(url, hello, { authorization: `Bearer ${chatOnly}` });
    assert.equal(forbidden.status, 403);
    assertCanonical(forbidden.body, 'AUTH_FORBIDDEN');
    assert.deepEqual(forbidden.body.error.details, { requiredCapability: 'completions' });
  });
});
