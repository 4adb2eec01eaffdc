/** The Cohere v2 translator's own rules, beyond the conformance kit: what is dropped, mapped and refused. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../core/canonical/chat.ts';
import type { ProviderTarget, StreamEvent } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { decodeStream } from '../../core/streaming/decode.ts';
import cohere from '../../providers/cohere/index.ts';
import { assemble } from '../conformance/kit.ts';

const target: ProviderTarget = { slug: 'cohere', baseUrl: 'https://api.cohere.com', apiKey: 'co-key', headers: {}, options: {}, upstreamModel: 'command-a-03-2025' };
const chat = cohere.chat!;

const request = (extra: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest =>
  ({ model: 'caller-model', messages: [{ role: 'user', content: 'hi' }], ...extra });
const body = (r: ChatCompletionRequest, stream = false) => JSON.parse(chat.toUpstream(r, target, stream).body!);

const sse = (events: Array<Record<string, unknown>>, named = true) =>
  events.map((e) => `${named ? `event: ${String(e.type)}\n` : ''}data: ${JSON.stringify(e)}\n\n`).join('');

async function decode(text: string): Promise<ChatCompletionChunk[]> {
  const decoder = chat.streamDecoder(target, request());
  const chunks: ChatCompletionChunk[] = [];
  for await (const event of decodeStream('sse', (async function* () { yield new TextEncoder().encode(text); })())) {
    const out = decoder.event(event as StreamEvent);
    chunks.push(...out.chunks);
    if (out.done) break;
  }
  chunks.push(...decoder.end());
  return chunks;
}

const END = { type: 'message-end', delta: { finish_reason: 'COMPLETE', usage: { billed_units: { input_tokens: 5, output_tokens: 3 }, tokens: { input_tokens: 200, output_tokens: 4 } } } };

describe('cohere: request', () => {
  test('the upstream model replaces the caller\'s; the credential is the provider\'s bearer', () => {
    const built = chat.toUpstream(request(), target, false);
    assert.equal(built.path, '/v2/chat');
    assert.equal(built.headers.authorization, 'Bearer co-key');
    assert.equal(JSON.parse(built.body!).model, 'command-a-03-2025');
    assert.equal(JSON.parse(built.body!).stream, false);
  });

  test('parameters take Cohere\'s names', () => {
    const b = body(request({ top_p: 0.5, max_completion_tokens: 80, max_tokens: 10, stop: 'END', seed: 7, temperature: 0.1, frequency_penalty: 0.2, presence_penalty: 0.3 }));
    assert.deepEqual(
      { p: b.p, max_tokens: b.max_tokens, stop_sequences: b.stop_sequences, seed: b.seed, temperature: b.temperature, frequency_penalty: b.frequency_penalty, presence_penalty: b.presence_penalty },
      { p: 0.5, max_tokens: 80, stop_sequences: ['END'], seed: 7, temperature: 0.1, frequency_penalty: 0.2, presence_penalty: 0.3 },
    );
    assert.equal(b.top_p, undefined);
  });

  test('json_schema becomes json_object with the schema; json_object stays', () => {
    const schema = { type: 'object', properties: { n: { type: 'integer' } } };
    assert.deepEqual(body(request({ response_format: { type: 'json_schema', json_schema: { name: 'n', schema } } })).response_format, { type: 'json_object', json_schema: schema });
    assert.deepEqual(body(request({ response_format: { type: 'json_object' } })).response_format, { type: 'json_object' });
    assert.equal(body(request({ response_format: { type: 'text' } })).response_format, undefined);
  });

  test('tool choice: none and required in capitals, a named function as the only tool offered and required, auto as the default', () => {
    const tools = ['a', 'b'].map((name) => ({ type: 'function' as const, function: { name, parameters: { type: 'object' } } }));
    assert.equal(body(request({ tools, tool_choice: 'none' })).tool_choice, 'NONE');
    assert.equal(body(request({ tools, tool_choice: 'required' })).tool_choice, 'REQUIRED');
    const auto = body(request({ tools, tool_choice: 'auto' }));
    assert.equal(auto.tool_choice, undefined);
    assert.deepEqual(auto.tools.map((t: { function: { name: string } }) => t.function.name), ['a', 'b']);
    const named = body(request({ tools, tool_choice: { type: 'function', function: { name: 'b' } } }));
    assert.equal(named.tool_choice, 'REQUIRED');
    assert.deepEqual(named.tools.map((t: { function: { name: string } }) => t.function.name), ['b']);
    assert.throws(() => body(request({ tools, tool_choice: { type: 'function', function: { name: 'zzz' } } })), (e: GatewayError) => e.code === 'VALIDATION_ERROR');
    assert.equal(body(request({ tool_choice: 'required' })).tool_choice, undefined, 'no tools, no tool choice');
  });

  test('messages: developer is system, images stay image_url parts, a tool-calling turn has no empty content', () => {
    const b = body(request({
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'ok' }] },
      ],
    }));
    assert.deepEqual(b.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } }] },
      { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'ok' },
    ]);
  });

  test('reasoning maps to thinking: a budget, on, or off for minimal', () => {
    assert.deepEqual(body(request({ reasoning: { budget_tokens: 2048 } })).thinking, { type: 'enabled', token_budget: 2048 });
    assert.deepEqual(body(request({ reasoning_effort: 'high' })).thinking, { type: 'enabled' });
    assert.deepEqual(body(request({ reasoning: { effort: 'minimal' } })).thinking, { type: 'disabled' });
    assert.equal(body(request()).thinking, undefined);
  });

  test('options: safety mode and client name', () => {
    const t = { ...target, options: { safetyMode: 'STRICT', clientName: 'aigw' } };
    const built = chat.toUpstream(request(), t, true);
    assert.equal(JSON.parse(built.body!).safety_mode, 'STRICT');
    assert.equal(built.headers['x-client-name'], 'aigw');
    assert.equal(built.headers.accept, 'text/event-stream');
  });
});

describe('cohere: answers', () => {
  const answer = (extra: Record<string, unknown>) => ({ id: 'r1', finish_reason: 'COMPLETE', message: { role: 'assistant', content: [{ type: 'text', text: 'Hi' }] }, ...extra });

  test('finish reasons', () => {
    const cases: Array<[string, string]> = [['COMPLETE', 'stop'], ['STOP_SEQUENCE', 'stop'], ['MAX_TOKENS', 'length'], ['TOOL_CALL', 'tool_calls'], ['ERROR_TOXIC', 'content_filter']];
    for (const [raw, expected] of cases) assert.equal(chat.fromUpstream(answer({ finish_reason: raw }), target, request()).choices[0]!.finish_reason, expected, raw);
  });

  test('a generation that ended in ERROR or TIMEOUT is an error, not an answer', () => {
    assert.throws(() => chat.fromUpstream(answer({ finish_reason: 'ERROR' }), target, request()), (e: GatewayError) => e.code === 'UPSTREAM_ERROR');
    assert.throws(() => chat.fromUpstream(answer({ finish_reason: 'TIMEOUT' }), target, request()), (e: GatewayError) => e.code === 'UPSTREAM_TIMEOUT');
  });

  test('usage: billed units first, the model\'s own token count when nothing is billed, none when neither', () => {
    const billed = chat.fromUpstream(answer({ usage: { billed_units: { input_tokens: 5, output_tokens: 3 }, tokens: { input_tokens: 200, output_tokens: 4 } } }), target, request());
    assert.deepEqual(billed.usage, { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
    const tokens = chat.fromUpstream(answer({ usage: { tokens: { input_tokens: 200, output_tokens: 4 } } }), target, request());
    assert.deepEqual(tokens.usage, { prompt_tokens: 200, completion_tokens: 4, total_tokens: 204 });
    assert.equal(chat.fromUpstream(answer({}), target, request()).usage, undefined);
  });

  test('the tool plan, thinking and citations are not the answer\'s text', () => {
    const result = chat.fromUpstream(answer({
      finish_reason: 'TOOL_CALL',
      message: {
        role: 'assistant',
        content: [{ type: 'thinking', thinking: 'hmm' }, { type: 'text', text: 'Checking.' }],
        tool_plan: 'I will call f.',
        tool_calls: [{ id: 'f_1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }],
        citations: [{ start: 0, end: 3, text: 'Che', sources: [] }],
      },
    }), target, request());
    assert.equal(result.choices[0]!.message.content, 'Checking.');
    assert.deepEqual(result.choices[0]!.message.tool_calls, [{ id: 'f_1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }]);
    assert.equal(result.model, 'command-a-03-2025');
  });

  test('a body without a message is malformed -> UPSTREAM_ERROR', () => {
    assert.throws(() => chat.fromUpstream({ id: 'x' }, target, request()), (e: GatewayError) => e.code === 'UPSTREAM_ERROR');
  });

  test('errors: the message is Cohere\'s; 498 (invalid token) is a refused credential', () => {
    const bad = cohere.mapError(400, { id: 'e', message: 'invalid request: messages must not be empty' }, target);
    assert.equal(bad.code, 'UPSTREAM_BAD_REQUEST');
    assert.match(bad.message, /messages must not be empty/);
    const token = cohere.mapError(498, { message: 'invalid api token' }, target);
    assert.equal(token.code, 'UPSTREAM_ERROR');
    assert.equal((token.details as { upstreamStatus: number }).upstreamStatus, 498);
    assert.equal(cohere.mapError(429, { message: 'slow down' }, target).code, 'UPSTREAM_RATE_LIMITED');
  });
});

describe('cohere: streams', () => {
  test('tool-plan deltas, citations, thinking and debug events stay out of the content', async () => {
    const chunks = await decode(sse([
      { id: 's1', type: 'message-start', delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } },
      { type: 'tool-plan-delta', delta: { message: { tool_plan: 'I will look ' } } },
      { type: 'tool-plan-delta', delta: { message: { tool_plan: 'it up.' } } },
      { type: 'content-start', index: 0, delta: { message: { content: { type: 'thinking', thinking: '' } } } },
      { type: 'content-delta', index: 0, delta: { message: { content: { thinking: 'secret reasoning' } } } },
      { type: 'content-end', index: 0 },
      { type: 'content-start', index: 1, delta: { message: { content: { type: 'text', text: '' } } } },
      { type: 'content-delta', index: 1, delta: { message: { content: { text: 'Paris is ' } } } },
      { type: 'citation-start', index: 0, delta: { message: { citations: { start: 0, end: 5, text: 'Paris', sources: [{ type: 'document', id: 'd1' }] } } } },
      { type: 'citation-end', index: 0 },
      { type: 'content-delta', index: 1, delta: { message: { content: { text: 'sunny.' } } } },
      { type: 'content-end', index: 1 },
      { type: 'debug', prompt: '<prompt>' },
      END,
    ]));
    const got = assemble(chunks);
    assert.equal(got.text, 'Paris is sunny.');
    assert.equal(got.finish, 'stop');
    assert.deepEqual(got.usage, { prompt_tokens: 5, completion_tokens: 3 });
    assert.equal(chunks[0]!.id, 's1');
    assert.equal(chunks[0]!.choices[0]!.delta.role, 'assistant');
  });

  test('event names map: tool-call-start opens a call by index, tool-call-delta appends, message-end finishes', async () => {
    const call = (index: number, id: string, name: string, args: string[]) => [
      { type: 'tool-call-start', index, delta: { message: { tool_calls: { id, type: 'function', function: { name, arguments: '' } } } } },
      ...args.map((a) => ({ type: 'tool-call-delta', index, delta: { message: { tool_calls: { function: { arguments: a } } } } })),
      { type: 'tool-call-end', index },
    ];
    const chunks = await decode(sse([
      { id: 's2', type: 'message-start', delta: { message: { role: 'assistant' } } },
      ...call(0, 'get_weather_1', 'get_weather', ['{"loc', 'ation":"Paris"}']),
      ...call(1, 'get_time_2', 'get_time', ['{}']),
      { type: 'message-end', delta: { finish_reason: 'TOOL_CALL' } },
    ]));
    const got = assemble(chunks);
    assert.deepEqual(got.toolCalls, [
      { id: 'get_weather_1', name: 'get_weather', arguments: '{"location":"Paris"}' },
      { id: 'get_time_2', name: 'get_time', arguments: '{}' },
    ]);
    assert.equal(got.finish, 'tool_calls');
    assert.equal(got.usage, null, 'no usage reported: the core estimates it');
  });

  test('the type in the data is what counts; an unnamed (data-only) stream decodes the same', async () => {
    const events = [{ id: 's3', type: 'message-start' }, { type: 'content-delta', index: 0, delta: { message: { content: { text: 'ok' } } } }, END];
    assert.deepEqual(assemble(await decode(sse(events, false))), assemble(await decode(sse(events))));
  });

  test('ERROR as the stream\'s finish reason fails the stream', async () => {
    await assert.rejects(decode(sse([{ type: 'message-start' }, { type: 'message-end', delta: { finish_reason: 'ERROR' } }])), (e: GatewayError) => e.code === 'UPSTREAM_ERROR');
  });

  test('a stream cut before message-end is an error, not a short answer', async () => {
    await assert.rejects(decode(sse([{ type: 'message-start' }, { type: 'content-delta', delta: { message: { content: { text: 'par' } } } }])), /ended before message-end/);
  });

  test('a [DONE] after message-end is harmless; an undecodable event is UPSTREAM_ERROR', async () => {
    const got = assemble(await decode(`${sse([{ type: 'message-start' }, END])}data: [DONE]\n\n`));
    assert.equal(got.finish, 'stop');
    await assert.rejects(decode('event: content-delta\ndata: {not json\n\n'), (e: GatewayError) => e.code === 'UPSTREAM_ERROR');
  });
});
