/** The Anthropic stream decoder on hand-written event sequences, and what the gateway refuses before any I/O. */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../core/canonical/chat.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { decodeSse } from '../../core/streaming/sse.ts';
import { createMessagesStreamDecoder } from '../../providers/anthropic/index.ts';
import { assemble } from '../conformance/kit.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const target = (): ProviderTarget => ({ slug: 'anthropic', baseUrl: 'http://127.0.0.1:1/v1', headers: {}, options: {}, upstreamModel: 'claude-up' });
const req = (fields: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest => ({ model: 'claude', messages: [{ role: 'user', content: 'hi' }], ...fields });

type Ev = [string, Record<string, unknown>];
const sse = (events: Ev[]) => events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`).join('');

async function decode(events: Ev[], request: ChatCompletionRequest = req()): Promise<ChatCompletionChunk[]> {
  const decoder = createMessagesStreamDecoder(target(), request);
  const chunks: ChatCompletionChunk[] = [];
  const source = (async function* () {
    yield new TextEncoder().encode(sse(events));
  })();
  for await (const event of decodeSse(source)) {
    const out = decoder.event(event);
    chunks.push(...out.chunks);
    if (out.done) return chunks;
  }
  chunks.push(...decoder.end());
  return chunks;
}

const start = (usage: Record<string, number> = { input_tokens: 10, output_tokens: 1 }): Ev =>
  ['message_start', { message: { id: 'msg_s', type: 'message', role: 'assistant', content: [], model: 'claude-up', usage } }];
const text = (index: number, ...pieces: string[]): Ev[] => [
  ['content_block_start', { index, content_block: { type: 'text', text: '' } }],
  ...pieces.map((t): Ev => ['content_block_delta', { index, delta: { type: 'text_delta', text: t } }]),
  ['content_block_stop', { index }],
];
const tool = (index: number, id: string, name: string, ...json: string[]): Ev[] => [
  ['content_block_start', { index, content_block: { type: 'tool_use', id, name, input: {} } }],
  ...json.map((j): Ev => ['content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: j } }]),
  ['content_block_stop', { index }],
];
const end = (stop_reason: string, usage: Record<string, number> = { output_tokens: 7 }): Ev[] =>
  [['message_delta', { delta: { stop_reason, stop_sequence: null }, usage }], ['message_stop', {}]];

describe('anthropic stream decoder', () => {
  test('pings are ignored; usage comes last, with cached tokens, output counted cumulatively', async () => {
    const chunks = await decode([
      start({ input_tokens: 10, cache_read_input_tokens: 5, cache_creation_input_tokens: 2, output_tokens: 1 }),
      ['ping', {}], ...text(0, 'Hel', 'lo'), ['ping', {}], ...end('end_turn', { output_tokens: 15 }),
    ]);
    const got = assemble(chunks);
    assert.equal(got.text, 'Hello');
    assert.equal(got.finish, 'stop');
    assert.equal(chunks[0]!.choices[0]!.delta.role, 'assistant');
    assert.equal(chunks[0]!.id, 'msg_s');
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, []);
    assert.deepEqual(last.usage, { prompt_tokens: 17, completion_tokens: 15, total_tokens: 32, prompt_tokens_details: { cached_tokens: 5 } });
    assert.ok(chunks.slice(0, -1).every((c) => !c.usage), 'usage only at the end');
  });

  test('tool calls are indexed by their ordinal among tool blocks; server tool blocks are dropped', async () => {
    const chunks = await decode([
      start(), ...text(0, 'Let me check.'),
      ['content_block_start', { index: 1, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } }],
      ['content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"query":"x"}' } }],
      ['content_block_stop', { index: 1 }],
      ['content_block_start', { index: 2, content_block: { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] } }],
      ['content_block_stop', { index: 2 }],
      ...tool(3, 'toolu_a', 'get_weather', '{"loc', 'ation":"Paris"}'),
      ...tool(4, 'toolu_b', 'get_time'),
      ...end('tool_use'),
    ]);
    const indexes = chunks.flatMap((c) => c.choices.flatMap((ch) => (ch.delta.tool_calls ?? []).map((t) => t.index)));
    assert.deepEqual([...new Set(indexes)], [0, 1]);
    const got = assemble(chunks);
    assert.equal(got.text, 'Let me check.');
    assert.deepEqual(got.toolCalls, [
      { id: 'toolu_a', name: 'get_weather', arguments: '{"location":"Paris"}' },
      { id: 'toolu_b', name: 'get_time', arguments: '{}' },
    ]);
    assert.equal(got.finish, 'tool_calls');
  });

  const thinking: Ev[] = [
    ['content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }],
    ['content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm, ' } }],
    ['content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Paris.' } }],
    ['content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'EqQB' } }],
    ['content_block_stop', { index: 0 }],
  ];

  test('thinking deltas are reasoning_content, never content; excluded when asked', async () => {
    const shown = await decode([start(), ...thinking, ...text(1, 'Paris.'), ...end('end_turn')], req({ reasoning_effort: 'low' }));
    assert.equal(assemble(shown).text, 'Paris.');
    assert.equal(shown.map((c) => (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '').join(''), 'Hmm, Paris.');
    const hidden = await decode([start(), ...thinking, ...text(1, 'Paris.'), ...end('end_turn')], req({ reasoning: { effort: 'low', exclude_from_output: true } }));
    assert.equal(assemble(hidden).text, 'Paris.');
    assert.ok(hidden.every((c) => !(c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content));
  });

  test('the response_format tool streams as content', async () => {
    const request = req({ response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' } } } });
    const got = assemble(await decode([start(), ...tool(0, 'toolu_j', 'answer', '{"n":', '42}'), ...end('tool_use')], request));
    assert.equal(got.text, '{"n":42}');
    assert.deepEqual(got.toolCalls, []);
    assert.equal(got.finish, 'stop');
  });

  test('an error event mid-stream is a GatewayError with the provider message (overloaded: 502 UPSTREAM_ERROR)', async () => {
    const failing = decode([start(), ...text(0, 'Hel'), ['error', { error: { type: 'overloaded_error', message: 'Overloaded' } }]]);
    await assert.rejects(failing, (err: GatewayError) => {
      assert.equal(err.code, 'UPSTREAM_ERROR');
      assert.match(err.message, /Overloaded/);
      assert.deepEqual(err.details, { provider: 'anthropic', upstreamStatus: 529, upstreamError: { type: 'overloaded_error', message: 'Overloaded' } });
      return true;
    });
    await assert.rejects(decode([start(), ['error', { error: { type: 'rate_limit_error', message: 'slow down' } }]]), (err: GatewayError) => err.code === 'UPSTREAM_RATE_LIMITED');
  });

  test('a stream cut before its stop reason fails; one missing only message_stop is finished', async () => {
    await assert.rejects(decode([start(), ...text(0, 'Hel')]), (err: GatewayError) => err.code === 'UPSTREAM_ERROR');
    const chunks = await decode([start(), ...text(0, 'Hi'), ['message_delta', { delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 2 } }]]);
    assert.equal(assemble(chunks).finish, 'length');
    assert.equal(chunks.at(-1)!.usage!.completion_tokens, 2);
  });

  test('refusal ends with content_filter', async () => {
    assert.equal(assemble(await decode([start(), ...text(0, 'I cannot'), ...end('refusal')])).finish, 'content_filter');
  });
});

describe('anthropic through the gateway', () => {
  let upstream: ReturnType<typeof createServer>;
  let upstreamUrl: string;
  const seen: IncomingMessage[] = [];
  let answer: (res: ServerResponse) => void = (res) => res.end();
  let gw: TestGateway;
  let key: string;

  before(async () => {
    upstream = createServer((r, res) => {
      seen.push(r);
      r.resume();
      r.on('end', () => answer(res));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    gw = await startTestGateway(`
routing:
  retries: 0
providers:
  anthropic:
    baseUrl: ${upstreamUrl}/v1
    apiKey: sk-ant-gw
models:
  - id: claude
    provider: anthropic
    upstreamModel: claude-up
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth]
`);
    key = await gw.createKey();
  });
  after(async () => {
    await gw?.close();
    upstream?.closeAllConnections();
    await new Promise<void>((resolve) => upstream?.close(() => resolve()));
  });

  const chat = (body: Record<string, unknown>) => postJson(`${gw.url}/v1/chat/completions`, { model: 'claude', messages: [{ role: 'user', content: 'hi' }], ...body }, { authorization: `Bearer ${key}` });

  test('refused before any I/O: temperature above 1, n > 1, a built-in tool Anthropic lacks', async () => {
    const before = seen.length;
    const hot = await chat({ temperature: 1.5 });
    assert.equal(hot.status, 400);
    assert.equal(hot.body.error.code, 'VALIDATION_ERROR');
    assert.deepEqual(hot.body.error.details, [{ path: '/temperature', message: 'must be <= 1 for provider anthropic (its range is 0 to 1)' }]);
    const several = await chat({ n: 2 });
    assert.equal(several.status, 400);
    assert.equal(several.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
    const grounding = await chat({ tools: [{ type: 'built_in', built_in: 'search_grounding' }] });
    assert.equal(grounding.status, 400);
    assert.equal(grounding.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.equal(seen.length, before, 'the upstream was never called');
  });

  test('an error event mid-stream ends the caller stream with an error event and no [DONE]', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sse([start(), ['ping', {}], ...text(0, 'Hel'), ['error', { error: { type: 'overloaded_error', message: 'Overloaded' } }]]));
    };
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(response.status, 200);
    const events = (await response.text()).split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
    assert.notEqual(events.at(-1), '[DONE]');
    const error = JSON.parse(events.at(-1)!).error;
    assert.equal(error.code, 'UPSTREAM_ERROR');
    assert.match(error.message, /Overloaded/);
    assert.equal(JSON.parse(events[1]!).choices[0].delta.content, 'Hel');
    assert.equal(seen.at(-1)!.headers['x-api-key'], 'sk-ant-gw');
  });
});
