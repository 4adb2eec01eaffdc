/**
 * POST /v1/messages: the official @anthropic-ai/sdk client, unmodified but for its base URL, through the gateway
 * to the OpenAI fake. The request is translated to the canonical format and the answer back, streaming or not;
 * the spec's four known streaming behaviours are each asserted.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { chunk, completion, startFakeOpenAI, writeSplit, type FakeOpenAI } from '../fakes/openai.ts';
import { chatConfig, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const MODEL = 'gpt-4o-mini';
const UPSTREAM_MODEL = 'gpt-4o-mini-2024-07-18';
const hello = { model: MODEL, max_tokens: 64, messages: [{ role: 'user' as const, content: 'Say hello' }] };
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** No retries (one upstream answer per case) and a breaker that never opens on the failures these tests provoke. */
const CONFIG = 'routing:\n  retries: 0\nupstream:\n  breaker:\n    volumeThreshold: 1000\n';

/** temperature and top_p are in the spec's table but no longer in this SDK's parameter types; it sends them as given. */
const withSampling = (params: Anthropic.MessageCreateParamsNonStreaming & { temperature?: number; top_p?: number }) => params as Anthropic.MessageCreateParamsNonStreaming;

interface SseFrame { event: string; data: any }

/** The raw event stream: every frame's `event:` name and parsed `data:`. */
async function frames(response: Response): Promise<SseFrame[]> {
  const text = await response.text();
  return text.split('\n\n').filter((block) => block.trim() !== '').map((block) => {
    const lines = block.split('\n');
    const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? '';
    const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
    return { event, data: JSON.parse(data) };
  });
}

/** An upstream answer with a tool call: text, then get_weather({city: Paris}). */
function toolCompletion(model: string, finish = 'tool_calls') {
  const base = completion(model, 'Let me check.');
  base.choices[0] = {
    index: 0,
    message: { role: 'assistant', content: 'Let me check.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] } as never,
    finish_reason: finish,
    logprobs: null,
  };
  return base;
}

function toolStreamEvents(model: string): string[] {
  const call = (fn: Record<string, unknown>, first = false) => ({ tool_calls: [{ index: 0, ...(first ? { id: 'call_1', type: 'function' } : {}), function: fn }] });
  return [
    chunk(model, { role: 'assistant', content: '' }, null, { usage: null }),
    chunk(model, { content: 'Let me check.' }, null, { usage: null }),
    chunk(model, call({ name: 'get_weather', arguments: '' }, true), null, { usage: null }),
    chunk(model, call({ arguments: '{"city":' }), null, { usage: null }),
    chunk(model, call({ arguments: '"Paris"}' }), null, { usage: null }),
    chunk(model, {}, 'tool_calls', { usage: null }),
    { ...chunk(model, {}), choices: [], usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 } },
  ].map((c) => `data: ${JSON.stringify(c)}\n\n`).concat('data: [DONE]\n\n');
}

function assertCanonical(body: any, code: string): void {
  assert.deepEqual(Object.keys(body), ['error'], JSON.stringify(body));
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'details', 'message']);
  assert.equal(body.error.code, code, JSON.stringify(body));
}

function assertMessagesEnvelope(body: any, type: string): void {
  assert.deepEqual(Object.keys(body).sort(), ['error', 'type'], JSON.stringify(body));
  assert.equal(body.type, 'error');
  assert.deepEqual(Object.keys(body.error).sort(), ['message', 'type']);
  assert.equal(body.error.type, type, JSON.stringify(body));
  assert.equal(typeof body.error.message, 'string');
}

describe('POST /v1/messages', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let key: string;
  let auth: Record<string, string>;
  let url: string;
  let client: Anthropic;

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(chatConfig(fake.baseUrl, CONFIG));
    key = await gw.createKey({ scopes: { capabilities: ['chat'] } });
    auth = { 'x-api-key': key, 'anthropic-version': '2023-06-01' };
    url = `${gw.url}/v1/messages`;
    client = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const sent = () => fake.requests.at(-1)!.body as Record<string, any>;

  describe('non-streaming', () => {
    test('a text answer in the Messages shape, with the routing headers; upstream got the canonical request', async () => {
      const { data, response } = await client.messages.create(hello).withResponse();
      assert.match(data.id, /^msg_/);
      assert.equal(data.type, 'message');
      assert.equal(data.role, 'assistant');
      assert.deepEqual(data.content, [{ type: 'text', text: 'Hello world' }]);
      assert.equal(data.model, UPSTREAM_MODEL);
      assert.equal(data.stop_reason, 'end_turn');
      assert.equal(data.stop_sequence, null);
      assert.deepEqual(data.usage, { input_tokens: 9, output_tokens: 2 });
      assert.match(response.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
      assert.equal(response.headers.get('x-provider'), 'openai');
      assert.equal(response.headers.get('x-model'), UPSTREAM_MODEL);

      const seen = fake.requests.at(-1)!;
      assert.equal(seen.path, '/v1/chat/completions');
      assert.equal(seen.headers.authorization, 'Bearer sk-upstream-secret');
      assert.ok(!JSON.stringify(seen.headers).includes(key), 'the caller key is never forwarded');
      assert.deepEqual(seen.body, { model: UPSTREAM_MODEL, messages: [{ role: 'user', content: 'Say hello' }], max_tokens: 64 });
    });

    test('parameters map to the canonical ones: system string, temperature, top_p, stop_sequences, metadata.user_id', async () => {
      await client.messages.create(withSampling({
        ...hello, system: 'Be brief.', temperature: 0.5, top_p: 0.9, stop_sequences: ['END', '###'], metadata: { user_id: 'user-42' },
      }));
      assert.deepEqual(sent(), {
        model: UPSTREAM_MODEL,
        messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello' }],
        max_tokens: 64, temperature: 0.5, top_p: 0.9, stop: ['END', '###'], user: 'user-42',
      });
    });

    test('system as blocks becomes a system message of text parts', async () => {
      await client.messages.create({ ...hello, system: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Be kind.' }] });
      assert.deepEqual(sent().messages[0], { role: 'system', content: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Be kind.' }] });
    });

    test('an image block becomes an image_url part with a data: URL', async () => {
      await client.messages.create({
        ...hello,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] }],
      });
      assert.deepEqual(sent().messages, [{
        role: 'user',
        content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }],
      }]);
    });

    test('tools and tool_choice map to function tools; auto, any (required) and a named tool', async () => {
      fake.handle((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(toolCompletion(String(req.body.model))));
      });
      const tools = [{ name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } }];
      const message = await client.messages.create({ ...hello, tools, tool_choice: { type: 'auto' } });
      assert.deepEqual(sent().tools, [{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: tools[0]!.input_schema } }]);
      assert.equal(sent().tool_choice, 'auto');
      // The answer: the text block, then a tool_use block whose input is the parsed arguments.
      assert.deepEqual(message.content, [
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      ]);
      assert.equal(message.stop_reason, 'tool_use');

      await client.messages.create({ ...hello, tools, tool_choice: { type: 'any' } });
      assert.equal(sent().tool_choice, 'required');
      await client.messages.create({ ...hello, tools, tool_choice: { type: 'tool', name: 'get_weather' } });
      assert.deepEqual(sent().tool_choice, { type: 'function', function: { name: 'get_weather' } });
    });

    test('multi-turn with tool_use and tool_result: assistant tool_calls, then tool messages, then the user text', async () => {
      await client.messages.create({
        ...hello,
        messages: [
          { role: 'user', content: 'Weather in Paris and Rome?' },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Checking.' },
              { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
              { type: 'tool_use', id: 'call_2', name: 'get_weather', input: { city: 'Rome' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'call_1', content: 'sunny' },
              { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: 'rainy' }, { type: 'text', text: '12C' }] },
              { type: 'text', text: 'Thanks, summarize.' },
            ],
          },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'call_3', name: 'get_weather', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_3', content: 'n/a' }] },
        ],
      });
      assert.deepEqual(sent().messages, [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: JSON.stringify({ city: 'Paris' }) } },
            { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: JSON.stringify({ city: 'Rome' }) } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
        { role: 'tool', tool_call_id: 'call_2', content: 'rainy\n12C' },
        { role: 'user', content: 'Thanks, summarize.' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_3', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_3', content: 'n/a' },
      ]);
    });

    test('stop reasons: length -> max_tokens, content_filter -> refusal, a named stop sequence -> stop_sequence', async () => {
      const answer = (finish: string, extra: Record<string, unknown> = {}) => fake.handle((req, res) => {
        const body = completion(String(req.body.model), 'partial');
        Object.assign(body.choices[0]!, { finish_reason: finish, ...extra });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      });
      answer('length');
      assert.equal((await client.messages.create(hello)).stop_reason, 'max_tokens');
      answer('content_filter');
      assert.equal((await client.messages.create(hello)).stop_reason, 'refusal');
      // OpenAI does not say which sequence matched: end_turn. A vLLM-style server names it in stop_reason.
      answer('stop');
      const plain = await client.messages.create({ ...hello, stop_sequences: ['END'] });
      assert.equal(plain.stop_reason, 'end_turn');
      assert.equal(plain.stop_sequence, null);
      answer('stop', { stop_reason: 'END' });
      const named = await client.messages.create({ ...hello, stop_sequences: ['END'] });
      assert.equal(named.stop_reason, 'stop_sequence');
      assert.equal(named.stop_sequence, 'END');
    });
  });

  describe('streaming', () => {
    test('the six events in fixed order, each `event:` name equal to its data type, with the routing headers', async () => {
      const response = await fetch(url, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ ...hello, stream: true }) });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'text/event-stream');
      assert.ok(response.headers.get('x-request-id'));
      assert.equal(response.headers.get('x-provider'), 'openai');
      assert.equal(response.headers.get('x-model'), UPSTREAM_MODEL);
      const events = await frames(response);
      for (const e of events) assert.equal(e.event, e.data.type);
      assert.deepEqual(events.map((e) => e.event), [
        'message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop',
      ]);
      const [start, blockStart, d1, d2, blockStop, delta] = events.map((e) => e.data);
      assert.match(start.message.id, /^msg_/);
      assert.deepEqual({ ...start.message, id: 'x' }, {
        id: 'x', type: 'message', role: 'assistant', content: [], model: UPSTREAM_MODEL, stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 },
      });
      assert.deepEqual(blockStart, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
      assert.deepEqual([d1, d2], [
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' world' } },
      ]);
      assert.deepEqual(blockStop, { type: 'content_block_stop', index: 0 });
      assert.deepEqual(delta, { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } });
      assert.equal(sent().stream, true);
    });

    test('the SDK stream helper assembles the message', async () => {
      const stream = client.messages.stream(hello);
      const message = await stream.finalMessage();
      assert.deepEqual(message.content, [{ type: 'text', text: 'Hello world' }]);
      assert.equal(message.stop_reason, 'end_turn');
      assert.equal(message.usage.output_tokens, 2);
    });

    test('known behaviour 1: usage.input_tokens in message_start is always 0, though the upstream reported 9', async () => {
      const events: Anthropic.MessageStreamEvent[] = [];
      for await (const e of await client.messages.create({ ...hello, stream: true })) events.push(e);
      const start = events.find((e) => e.type === 'message_start');
      assert.equal(start?.type === 'message_start' && start.message.usage.input_tokens, 0);
      assert.ok(fake.requests.length > 0);
    });

    test('known behaviour 2: stop_reason in message_delta is always end_turn, whatever the upstream reason', async () => {
      for (const finish of ['length', 'content_filter', 'tool_calls', 'stop']) {
        fake.handle((req, res) => writeSplit(res, [
          `data: ${JSON.stringify(chunk(String(req.body.model), { content: 'cut' }))}\n\n`,
          `data: ${JSON.stringify(chunk(String(req.body.model), {}, finish))}\n\n`,
          'data: [DONE]\n\n',
        ]));
        const events: Anthropic.MessageStreamEvent[] = [];
        for await (const e of await client.messages.create({ ...hello, stream: true })) events.push(e);
        const delta = events.find((e) => e.type === 'message_delta');
        assert.equal(delta?.type === 'message_delta' && delta.delta.stop_reason, 'end_turn', finish);
        assert.equal(events.at(-1)?.type, 'message_stop');
      }
    });

    test('known behaviour 3: tool calls are dropped from the stream (no tool_use block, no input_json_delta)', async () => {
      fake.handle((req, res) => writeSplit(res, toolStreamEvents(String(req.body.model))));
      const response = await fetch(url, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ ...hello, stream: true, tools: [{ name: 'get_weather', input_schema: { type: 'object' } }] }),
      });
      const events = await frames(response);
      const text = JSON.stringify(events);
      assert.ok(!text.includes('tool_use'), text);
      assert.ok(!text.includes('input_json_delta'), text);
      assert.ok(!text.includes('get_weather'), text);
      assert.deepEqual(events.filter((e) => e.event === 'content_block_start').map((e) => e.data.content_block.type), ['text']);
      assert.deepEqual(events.filter((e) => e.event === 'content_block_delta').map((e) => e.data.delta), [{ type: 'text_delta', text: 'Let me check.' }]);
      assert.deepEqual(events.find((e) => e.event === 'message_delta')?.data, { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 12 } });
      // The SDK sees a plain text message.
      fake.handle((req, res) => writeSplit(res, toolStreamEvents(String(req.body.model))));
      const message = await client.messages.stream({ ...hello, tools: [{ name: 'get_weather', input_schema: { type: 'object' } }] }).finalMessage();
      assert.deepEqual(message.content, [{ type: 'text', text: 'Let me check.' }]);
    });

    test('known behaviour 4 on a stream request: validation is 400 in the canonical envelope, not an event stream', async () => {
      const r = await postJson(url, { ...hello, stream: true, temperature: 1.5 }, auth);
      assert.equal(r.status, 400);
      assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
      assertCanonical(r.body, 'VALIDATION_ERROR');
    });

    test('a failure after the stream started: an `error` event in the Messages shape, and the SDK throws it', async () => {
      const failing = (req: { body: Record<string, unknown> }, res: Parameters<Parameters<FakeOpenAI['handle']>[0]>[1]) => writeSplit(res, [
        `data: ${JSON.stringify(chunk(String(req.body.model), { content: 'Hel' }))}\n\n`,
        `data: ${JSON.stringify({ error: { message: 'the model crashed', type: 'server_error' } })}\n\n`,
      ]);
      fake.handle(failing);
      const response = await fetch(url, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ ...hello, stream: true }) });
      assert.equal(response.status, 200);
      const events = await frames(response);
      assert.deepEqual(events.slice(0, 3).map((e) => e.event), ['message_start', 'content_block_start', 'content_block_delta']);
      const last = events.at(-1)!;
      assert.equal(last.event, 'error');
      assertMessagesEnvelope(last.data, 'server_error');
      assert.match(last.data.error.message, /the model crashed/);
      assert.ok(!events.some((e) => e.event === 'message_stop'));

      fake.handle(failing);
      await assert.rejects(async () => {
        for await (const _ of await client.messages.create({ ...hello, stream: true })) { /* drain */ }
      }, (err: unknown) => err instanceof Anthropic.APIError && /the model crashed/.test(err.message));
    });
  });

  describe('errors', () => {
    test('every validation rule: 400 VALIDATION_ERROR in the canonical envelope with the path, and no upstream call', async () => {
      const blocks = (content: unknown[]) => ({ ...hello, messages: [{ role: 'user', content }] });
      const { max_tokens: _omit, ...noMaxTokens } = hello;
      const cases: Array<[unknown, string]> = [
        [noMaxTokens, '/max_tokens'],
        [{ ...hello, max_tokens: 0 }, '/max_tokens'],
        [{ ...hello, max_tokens: 1.5 }, '/max_tokens'],
        [{ ...hello, model: undefined }, '/model'],
        [{ ...hello, messages: [] }, '/messages'],
        [{ ...hello, messages: undefined }, '/messages'],
        [{ ...hello, temperature: 1.5 }, '/temperature'],
        [{ ...hello, temperature: -0.1 }, '/temperature'],
        [{ ...hello, top_p: 1.1 }, '/top_p'],
        [{ ...hello, stream: 'yes' }, '/stream'],
        [{ ...hello, stop_sequences: 'END' }, '/stop_sequences'],
        [{ ...hello, messages: [{ role: 'system', content: 'x' }] }, '/messages/0/role'],
        [{ ...hello, messages: [{ role: 'user' }] }, '/messages/0/content'],
        [blocks([{ type: 'thinking', thinking: 'hmm' }]), '/messages/0/content/0/type'],
        [blocks([{ type: 'text' }]), '/messages/0/content/0/text'],
        [blocks([{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }]), '/messages/0/content/0/source/type'],
        [blocks([{ type: 'image', source: { type: 'base64', media_type: 'image/tiff', data: PNG } }]), '/messages/0/content/0/source/media_type'],
        [blocks([{ type: 'tool_result', content: 'x' }]), '/messages/0/content/0/tool_use_id'],
        [blocks([{ type: 'tool_use', id: 'c1', name: 'f', input: {} }]), '/messages/0/content/0/type'],
        [{ ...hello, messages: [{ role: 'assistant', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] }] }, '/messages/0/content/0/type'],
        [{ ...hello, system: [{ type: 'image' }] }, '/system/0/type'],
        [{ ...hello, system: 42 }, '/system'],
        [{ ...hello, tools: [{ name: 'bad name!', input_schema: { type: 'object' } }] }, '/tools/0/name'],
        [{ ...hello, tools: [{ name: 'f' }] }, '/tools/0/input_schema'],
        [{ ...hello, tool_choice: { type: 'none' } }, '/tool_choice/type'],
        [{ ...hello, tool_choice: { type: 'tool' } }, '/tool_choice/name'],
        [{ ...hello, tool_choice: 'auto' }, '/tool_choice'],
        [{ ...hello, metadata: { user_id: 7 } }, '/metadata/user_id'],
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

    test('the SDK gets validation failures as a 400 BadRequestError carrying the canonical body', async () => {
      await assert.rejects(client.messages.create(withSampling({ ...hello, temperature: 1.5 })), (err: unknown) => {
        assert.ok(err instanceof Anthropic.BadRequestError);
        assert.equal(err.status, 400);
        assertCanonical(err.error, 'VALIDATION_ERROR');
        return true;
      });
    });

    test('an unknown model: 404 in the Messages envelope (not_found_error)', async () => {
      const r = await postJson(url, { ...hello, model: 'gpt-9' }, auth);
      assert.equal(r.status, 404);
      assertMessagesEnvelope(r.body, 'not_found_error');
      assert.ok(r.headers.get('x-request-id'));
      await assert.rejects(client.messages.create({ ...hello, model: 'gpt-9' }), (err: unknown) => err instanceof Anthropic.NotFoundError);
    });

    test('upstream failures: 500 -> 502 server_error, 400 -> 400 invalid_request_error, both in the Messages envelope', async () => {
      for (const [upstream, status, type] of [[500, 502, 'server_error'], [400, 400, 'invalid_request_error']] as const) {
        fake.handle((_, res) => {
          res.writeHead(upstream, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: `upstream said ${upstream}`, type: 'x' } }));
        });
        const r = await postJson(url, hello, auth);
        assert.equal(r.status, status);
        assertMessagesEnvelope(r.body, type);
        assert.match(r.body.error.message, new RegExp(`upstream said ${upstream}`));
        // The same before a stream starts: the status and envelope, not an event stream.
        const streamed = await postJson(url, { ...hello, stream: true }, auth);
        assert.equal(streamed.status, status);
        assertMessagesEnvelope(streamed.body, type);
      }
      fake.handle((_, res) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{}');
      });
      await assert.rejects(client.messages.create(hello), (err: unknown) => err instanceof Anthropic.InternalServerError && err.status === 502);
    });

    test('credentials and capability stay canonical (core/errors.ts): 401 without a key, 403 for a key without chat', async () => {
      const anonymous = await postJson(url, hello, { 'anthropic-version': '2023-06-01' });
      assert.equal(anonymous.status, 401);
      assertCanonical(anonymous.body, 'AUTH_REQUIRED');
      const completionsOnly = await gw.createKey({ scopes: { capabilities: ['completions'] } });
      const forbidden = await postJson(url, hello, { 'x-api-key': completionsOnly });
      assert.equal(forbidden.status, 403);
      assertCanonical(forbidden.body, 'AUTH_FORBIDDEN');
      assert.deepEqual(forbidden.body.error.details, { requiredCapability: 'chat' });
    });
  });
});
