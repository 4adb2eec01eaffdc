/** The Anthropic translator's request side and answers, beyond the conformance kit. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatCompletionRequest } from '../../core/canonical/chat.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import anthropic, { buildMessagesRequest, parseMessagesResponse } from '../../providers/anthropic/index.ts';

const target = (options: Record<string, unknown> = {}): ProviderTarget => ({
  slug: 'anthropic', baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'sk-ant-test', headers: {}, options, upstreamModel: 'claude-up',
});
const req = (fields: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest => ({
  model: 'caller-model', messages: [{ role: 'user', content: 'hi' }], ...fields,
});
const body = (fields: Partial<ChatCompletionRequest> = {}, options: Record<string, unknown> = {}, stream = false) =>
  buildMessagesRequest(req(fields), target(options), stream).body as any;

/** Asserts `fn` throws a GatewayError with this code (and a details path, for validation errors). */
function refuses(fn: () => unknown, code: string, path?: string): GatewayError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof GatewayError, `expected a GatewayError, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  assert.equal(caught.status, 400);
  if (path) assert.equal((caught.details as Array<{ path: string }>)[0]!.path, path);
  return caught;
}

describe('anthropic request: basics', () => {
  test('the upstream model, a required max_tokens, the provider credential and version headers', () => {
    const up = anthropic.chat!.toUpstream(req(), target(), false);
    assert.equal(up.path, '/messages');
    assert.equal(up.headers['x-api-key'], 'sk-ant-test');
    assert.equal(up.headers['anthropic-version'], '2023-06-01');
    assert.equal(up.headers.authorization, undefined);
    assert.equal(up.headers['anthropic-beta'], undefined);
    const sent = JSON.parse(up.body!);
    assert.deepEqual(sent, { model: 'claude-up', max_tokens: 4096, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(body({}, { defaultMaxTokens: 1000 }).max_tokens, 1000);
    assert.equal(body({ max_tokens: 10, max_completion_tokens: 20 }).max_tokens, 20);
  });

  test('the Vertex AI shape: no model, anthropic_version in the body', () => {
    const { body: sent } = buildMessagesRequest(req(), target(), true, { includeModel: false, anthropicVersion: 'vertex-2023-10-16' });
    assert.equal(sent.model, undefined);
    assert.equal(sent.anthropic_version, 'vertex-2023-10-16');
    assert.equal(sent.stream, true);
  });

  test('system and developer messages go to the top-level system, wherever they stand', () => {
    const sent = body({ messages: [
      { role: 'system', content: 'Be terse.' },
      { role: 'user', content: 'hi' },
      { role: 'developer', content: [{ type: 'text', text: 'Use French.' }] },
    ] });
    assert.equal(sent.system, 'Be terse.\n\nUse French.');
    assert.deepEqual(sent.messages, [{ role: 'user', content: 'hi' }]);
  });

  test('stop, temperature 1, top_p, user', () => {
    const sent = body({ stop: 'END', temperature: 1, top_p: 0.9, user: 'u-42' });
    assert.deepEqual(sent.stop_sequences, ['END']);
    assert.equal(sent.temperature, 1);
    assert.equal(sent.top_p, 0.9);
    assert.deepEqual(sent.metadata, { user_id: 'u-42' });
  });

  test('temperature above 1 is refused (400), not clamped', () => {
    refuses(() => body({ temperature: 1.2 }), 'VALIDATION_ERROR', '/temperature');
  });

  test('parameters the Messages API lacks are refused', () => {
    refuses(() => body({ logprobs: true }), 'CAPABILITY_NOT_SUPPORTED');
    refuses(() => body({ logit_bias: { '50256': -100 } }), 'CAPABILITY_NOT_SUPPORTED');
    refuses(() => body({ presence_penalty: 0.5 }), 'CAPABILITY_NOT_SUPPORTED');
    assert.doesNotThrow(() => body({ presence_penalty: 0, seed: 7 }));
  });
});

describe('anthropic request: turns', () => {
  test('tool results in a row become one user turn of tool_result blocks, the user text after them', () => {
    const sent = body({ messages: [
      { role: 'user', content: 'Weather and time?' },
      { role: 'assistant', content: 'Checking.', tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
        { id: 'call.2', type: 'function', function: { name: 'get_time', arguments: '' } },
      ] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
      { role: 'tool', tool_call_id: 'call.2', content: [{ type: 'text', text: '12:00' }] },
      { role: 'user', content: 'Thanks; and tomorrow?' },
    ] });
    assert.deepEqual(sent.messages, [
      { role: 'user', content: 'Weather and time?' },
      { role: 'assistant', content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { location: 'Paris' } },
        { type: 'tool_use', id: 'call_2', name: 'get_time', input: {} },
      ] },
      { role: 'user', content: [
        { type: 'tool_result', tool_use_id: 'call_1', content: '{"temp":21}' },
        { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: '12:00' }] },
        { type: 'text', text: 'Thanks; and tomorrow?' },
      ] },
    ]);
  });

  test('consecutive user messages are merged', () => {
    const sent = body({ messages: [{ role: 'user', content: 'one' }, { role: 'user', content: 'two' }] });
    assert.deepEqual(sent.messages, [{ role: 'user', content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }] }]);
  });

  test('tool-call arguments that are not a JSON object are refused with the message path', () => {
    const call = (args: string) => body({ messages: [
      { role: 'user', content: 'x' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: args } }] },
    ] });
    refuses(() => call('{"location": Par'), 'VALIDATION_ERROR', '/messages/1/tool_calls/0/function/arguments');
    refuses(() => call('[1,2]'), 'VALIDATION_ERROR', '/messages/1/tool_calls/0/function/arguments');
  });

  test('images: data URLs as base64 sources, http(s) URLs as url sources, other schemes refused', () => {
    const image = (url: string) => body({ messages: [{ role: 'user', content: [{ type: 'text', text: 'What?' }, { type: 'image_url', image_url: { url } }] }] });
    assert.deepEqual(image('data:image/jpeg;base64,AAAA').messages[0].content[1], { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'AAAA' } });
    assert.deepEqual(image('https://example.com/cat.png').messages[0].content[1], { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } });
    refuses(() => image('ftp://example.com/cat.png'), 'VALIDATION_ERROR', '/messages/0/content/1/image_url/url');
  });

  test('cache_control: breakpoints at the end of the system prompt and of the last turn', () => {
    const sent = body({ messages: [{ role: 'system', content: 'Long rules.' }, { role: 'user', content: 'hi' }], cache_control: { cache_prefix: true, ttl_seconds: 3600 } });
    assert.deepEqual(sent.system, [{ type: 'text', text: 'Long rules.', cache_control: { type: 'ephemeral', ttl: '1h' } }]);
    assert.deepEqual(sent.messages[0].content, [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral', ttl: '1h' } }]);
  });
});

describe('anthropic request: tools', () => {
  const weather = { type: 'function' as const, function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

  test('function tools and every tool_choice', () => {
    assert.deepEqual(body({ tools: [weather] }).tools, [{ name: 'get_weather', description: 'Weather', input_schema: weather.function.parameters }]);
    assert.equal(body({ tools: [weather] }).tool_choice, undefined);
    assert.deepEqual(body({ tools: [weather], tool_choice: 'auto' }).tool_choice, { type: 'auto' });
    assert.deepEqual(body({ tools: [weather], tool_choice: 'none' }).tool_choice, { type: 'none' });
    assert.deepEqual(body({ tools: [weather], tool_choice: 'required' }).tool_choice, { type: 'any' });
    assert.deepEqual(body({ tools: [weather], tool_choice: { type: 'function', function: { name: 'get_weather' } } }).tool_choice, { type: 'tool', name: 'get_weather' });
    assert.deepEqual(body({ tools: [weather], parallel_tool_calls: false }).tool_choice, { type: 'auto', disable_parallel_tool_use: true });
  });

  test('built-in tools map to Anthropic server tools, with their config and beta headers', () => {
    const up = anthropic.chat!.toUpstream(req({ tools: [
      { type: 'built_in', built_in: 'web_search', config: { max_uses: 3, allowed_domains: ['example.com'] } },
      { type: 'built_in', built_in: 'code_execution' },
      { type: 'built_in', built_in: 'computer_use', config: { display_width_px: 1024, display_height_px: 768 } },
    ] }), target({ betas: ['interleaved-thinking-2025-05-14'] }), false);
    assert.deepEqual(JSON.parse(up.body!).tools, [
      { type: 'web_search_20250305', name: 'web_search', max_uses: 3, allowed_domains: ['example.com'] },
      { type: 'code_execution_20250825', name: 'code_execution' },
      { type: 'computer_20251124', name: 'computer', display_width_px: 1024, display_height_px: 768 },
    ]);
    assert.equal(up.headers['anthropic-beta'], 'interleaved-thinking-2025-05-14,code-execution-2025-08-25,computer-use-2025-11-24');
    assert.deepEqual(anthropic.capabilities.chat!.builtInTools, ['web_search', 'code_execution', 'computer_use']);
  });

  test('tool versions follow the options; computer_use needs the display size', () => {
    const { body: sent, betas } = buildMessagesRequest(req({ tools: [{ type: 'built_in', built_in: 'computer_use', config: { display_width_px: 800, display_height_px: 600 } }] }), target({ computerUseTool: 'computer_20250124' }), false);
    assert.equal((sent.tools as any)[0].type, 'computer_20250124');
    assert.deepEqual(betas, ['computer-use-2025-01-24']);
    refuses(() => body({ tools: [{ type: 'built_in', built_in: 'computer_use' }] }), 'VALIDATION_ERROR', '/tools/0/config/display_width_px');
  });
});

describe('anthropic: reasoning', () => {
  test('effort -> a documented thinking budget, added to the default max_tokens', () => {
    for (const [effort, budget] of [['minimal', 1024], ['low', 2048], ['medium', 8192], ['high', 16384]] as const) {
      const sent = body({ reasoning_effort: effort });
      assert.deepEqual(sent.thinking, { type: 'enabled', budget_tokens: budget });
      assert.equal(sent.max_tokens, 4096 + budget);
    }
    assert.deepEqual(body({ reasoning: { effort: 'low' } }).thinking, { type: 'enabled', budget_tokens: 2048 });
  });

  test("the caller's max tokens cover reasoning and answer: an effort budget fits under them", () => {
    const sent = body({ reasoning_effort: 'high', max_tokens: 3000 });
    assert.equal(sent.max_tokens, 3000);
    assert.deepEqual(sent.thinking, { type: 'enabled', budget_tokens: 2999 });
  });

  test('an explicit budget_tokens is sent as given; 0 means no thinking', () => {
    assert.deepEqual(body({ reasoning: { budget_tokens: 5000, effort: 'low' } }).thinking, { type: 'enabled', budget_tokens: 5000 });
    assert.equal(body({ reasoning: { budget_tokens: 0 } }).thinking, undefined);
    assert.equal(body({}).thinking, undefined);
  });

  const answer = { id: 'msg_1', type: 'message', model: 'claude-up', content: [
    { type: 'thinking', thinking: 'Let me think.', signature: 'sig' },
    { type: 'redacted_thinking', data: 'xxx' },
    { type: 'text', text: 'Paris.' },
  ], stop_reason: 'end_turn', usage: { input_tokens: 5, output_tokens: 9 } };

  test('thinking never reaches content; it is reasoning_content unless excluded', () => {
    const shown = parseMessagesResponse(answer, target(), req({ reasoning_effort: 'low' }));
    assert.equal(shown.choices[0]!.message.content, 'Paris.');
    assert.equal((shown.choices[0]!.message as any).reasoning_content, 'Let me think.');
    const hidden = parseMessagesResponse(answer, target(), req({ reasoning: { effort: 'low', exclude_from_output: true } }));
    assert.equal(hidden.choices[0]!.message.content, 'Paris.');
    assert.equal((hidden.choices[0]!.message as any).reasoning_content, undefined);
  });
});

describe('anthropic: response_format', () => {
  const schema = { name: 'answer', schema: { type: 'object', properties: { n: { type: 'integer' } } } };

  test('json_schema is a forced tool whose input comes back as the content, finish stop', () => {
    const sent = body({ response_format: { type: 'json_schema', json_schema: schema } });
    assert.equal(sent.tools[0].name, 'answer');
    assert.deepEqual(sent.tools[0].input_schema, schema.schema);
    assert.deepEqual(sent.tool_choice, { type: 'tool', name: 'answer' });
    const out = parseMessagesResponse({ type: 'message', content: [{ type: 'tool_use', id: 't', name: 'answer', input: { n: 42 } }], stop_reason: 'tool_use', usage: { input_tokens: 1, output_tokens: 2 } },
      target(), req({ response_format: { type: 'json_schema', json_schema: schema } }));
    assert.equal(out.choices[0]!.message.content, '{"n":42}');
    assert.equal(out.choices[0]!.message.tool_calls, undefined);
    assert.equal(out.choices[0]!.finish_reason, 'stop');
  });

  test('with function tools the model must call one of them or answer through the json tool', () => {
    const sent = body({ response_format: { type: 'json_object' }, tools: [{ type: 'function', function: { name: 'f' } }] });
    assert.deepEqual(sent.tools.map((t: { name: string }) => t.name), ['f', 'json_response']);
    assert.deepEqual(sent.tool_choice, { type: 'any' });
  });

  test('native mode sends output_config.format; tool mode with reasoning is refused', () => {
    const sent = body({ response_format: { type: 'json_schema', json_schema: schema } }, { structuredOutput: 'native' });
    assert.deepEqual(sent.output_config, { format: { type: 'json_schema', schema: schema.schema } });
    assert.equal(sent.tools, undefined);
    refuses(() => body({ response_format: { type: 'json_schema', json_schema: schema }, reasoning_effort: 'low' }), 'CAPABILITY_NOT_SUPPORTED');
  });
});

describe('anthropic answers', () => {
  const message = (fields: Record<string, unknown>) => ({ id: 'msg_1', type: 'message', model: 'claude-up', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: 3 }, ...fields });

  test('stop reasons', () => {
    const finish = (stop_reason: string) => parseMessagesResponse(message({ stop_reason }), target(), req()).choices[0]!.finish_reason;
    assert.equal(finish('end_turn'), 'stop');
    assert.equal(finish('stop_sequence'), 'stop');
    assert.equal(finish('pause_turn'), 'stop');
    assert.equal(finish('max_tokens'), 'length');
    assert.equal(finish('refusal'), 'content_filter');
  });

  test('cache usage: the prompt counts cached reads and writes, cached_tokens the reads', () => {
    const out = parseMessagesResponse(message({ usage: { input_tokens: 10, cache_read_input_tokens: 100, cache_creation_input_tokens: 20, output_tokens: 3 } }), target(), req());
    assert.deepEqual(out.usage, { prompt_tokens: 130, completion_tokens: 3, total_tokens: 133, prompt_tokens_details: { cached_tokens: 100 } });
  });

  test('text blocks are joined; server tool blocks are not tool calls', () => {
    const out = parseMessagesResponse(message({ content: [
      { type: 'text', text: 'Searching. ' },
      { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'x' } },
      { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
      { type: 'text', text: 'Found it.', citations: [] },
    ] }), target(), req());
    assert.equal(out.choices[0]!.message.content, 'Searching. Found it.');
    assert.equal(out.choices[0]!.message.tool_calls, undefined);
  });

  test('a body that is not a message is 502 UPSTREAM_ERROR; error bodies keep the provider message', () => {
    assert.throws(() => parseMessagesResponse({ nope: true }, target(), req()), (err: GatewayError) => err.code === 'UPSTREAM_ERROR' && err.status === 502);
    const overloaded = anthropic.mapError(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, target());
    assert.equal(overloaded.code, 'UPSTREAM_ERROR');
    assert.match(overloaded.message, /Overloaded/);
    const bad = anthropic.mapError(400, { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: too big' } }, target());
    assert.equal(bad.code, 'UPSTREAM_BAD_REQUEST');
    assert.deepEqual((bad.details as any).upstreamError, { type: 'invalid_request_error', message: 'max_tokens: too big' });
  });
});
