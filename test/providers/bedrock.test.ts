/**
 * Bedrock (Converse): the request and answer mappings on hand-written cases, and the stream decoder on event
 * sequences (exceptions mid-stream, usage only in metadata). Through a gateway: bedrock-gateway.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../core/canonical/chat.ts';
import type { ProviderTarget, StreamEvent } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import bedrock from '../../providers/bedrock/index.ts';
import { toConverse } from '../../providers/bedrock/request.ts';
import { assemble } from '../conformance/kit.ts';

const target = (upstreamModel = 'anthropic.claude-3-5-sonnet-20240620-v1:0', options: Record<string, unknown> = {}): ProviderTarget =>
  ({ slug: 'bedrock', baseUrl: 'https://bedrock-runtime.us-east-1.amazonaws.com', headers: {}, options: { region: 'us-east-1', ...options }, upstreamModel });
const req = (fields: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest => ({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...fields });
const weather = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
const code = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return err instanceof GatewayError ? err.code : String(err);
  }
  return 'no error';
};

describe('bedrock: canonical -> Converse', () => {
  test('system apart, same-role turns merged, tool results in the user turn, images as bytes', () => {
    const body = toConverse(req({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Use metric units.' }] },
        { role: 'user', content: [{ type: 'text', text: 'Look:' }, { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/AA==' } }] },
        { role: 'user', content: 'And the weather?' },
        { role: 'assistant', content: '', tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '' } },
        ] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp":3}' },
        { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: 'unknown' }] },
        { role: 'user', content: 'Thanks.' },
      ],
      tools: [weather],
    }), target());
    assert.deepEqual(body.system, [{ text: 'Be brief.' }, { text: 'Use metric units.' }]);
    assert.deepEqual(body.messages, [
      { role: 'user', content: [{ text: 'Look:' }, { image: { format: 'jpeg', source: { bytes: '/9j/AA==' } } }, { text: 'And the weather?' }] },
      { role: 'assistant', content: [
        { toolUse: { toolUseId: 'call_1', name: 'get_weather', input: { city: 'Oslo' } } },
        { toolUse: { toolUseId: 'call_2', name: 'get_weather', input: {} } },
      ] },
      { role: 'user', content: [
        { toolResult: { toolUseId: 'call_1', content: [{ text: '{"temp":3}' }] } },
        { toolResult: { toolUseId: 'call_2', content: [{ text: 'unknown' }] } },
        { text: 'Thanks.' },
      ] },
    ]);
    assert.deepEqual(body.toolConfig, { tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: weather.function.parameters } } }] });
  });

  test('inference parameters; what Converse has no field for is not sent', () => {
    const body = toConverse(req({ max_tokens: 10, max_completion_tokens: 64, temperature: 0.3, top_p: 0.9, stop: 'END', seed: 7, presence_penalty: 1, user: 'u1', logprobs: true }), target());
    assert.deepEqual(body.inferenceConfig, { maxTokens: 64, temperature: 0.3, topP: 0.9, stopSequences: ['END'] });
    assert.deepEqual(Object.keys(body).sort(), ['inferenceConfig', 'messages']);
  });

  test('tool_choice: auto, required -> any, a named function -> tool, none -> no tools', () => {
    const choice = (tool_choice: unknown) => toConverse(req({ tools: [weather], tool_choice }), target()).toolConfig;
    assert.deepEqual(choice('auto')?.toolChoice, { auto: {} });
    assert.deepEqual(choice('required')?.toolChoice, { any: {} });
    assert.deepEqual(choice({ type: 'function', function: { name: 'get_weather' } })?.toolChoice, { tool: { name: 'get_weather' } });
    assert.equal(choice(undefined)?.toolChoice, undefined);
    assert.equal(choice('none'), undefined);
    // With tool blocks in the conversation Converse requires toolConfig: the tools stay, nothing is forced.
    const history = toConverse(req({
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      ],
      tools: [weather], tool_choice: 'none',
    }), target());
    assert.equal(history.toolConfig?.tools.length, 1);
    assert.equal(history.toolConfig?.toolChoice, undefined);
  });

  test('json_schema is a forced tool whose input is the answer; with functions the model must call one of them', () => {
    const response_format = { type: 'json_schema' as const, json_schema: { name: 'person', schema: { type: 'object', properties: { name: { type: 'string' } } } } };
    const alone = toConverse(req({ response_format }), target()).toolConfig!;
    assert.equal((alone.tools[0]!.toolSpec as { name: string }).name, 'person');
    assert.deepEqual((alone.tools[0]!.toolSpec as { inputSchema: unknown }).inputSchema, { json: response_format.json_schema.schema });
    assert.deepEqual(alone.toolChoice, { tool: { name: 'person' } });
    assert.deepEqual(toConverse(req({ response_format, tools: [weather] }), target()).toolConfig!.toolChoice, { any: {} });
    assert.deepEqual(toConverse(req({ response_format: { type: 'json_object' } }), target()).toolConfig!.toolChoice, { tool: { name: 'json_answer' } });
    assert.equal(code(() => toConverse(req({ response_format: { type: 'json_schema', json_schema: { name: 'get_weather', schema: {} } }, tools: [weather] }), target())), 'VALIDATION_ERROR');
  });

  test('reasoning: Claude thinking, Nova reasoningConfig, gpt-oss reasoning_effort; other models get none', () => {
    const fields = (model: string, fields: Partial<ChatCompletionRequest>) => toConverse(req(fields), target(model)).additionalModelRequestFields;
    assert.deepEqual(fields('us.anthropic.claude-sonnet-4-20250514-v1:0', { reasoning: { budget_tokens: 3000 } }), { thinking: { type: 'enabled', budget_tokens: 3000 } });
    assert.deepEqual(fields('anthropic.claude-3-7-sonnet-20250219-v1:0', { reasoning_effort: 'low' }), { thinking: { type: 'enabled', budget_tokens: 2048 } });
    assert.deepEqual(fields('us.amazon.nova-2-lite-v1:0', { reasoning: { effort: 'minimal' } }), { reasoningConfig: { type: 'enabled', maxReasoningEffort: 'low' } });
    assert.deepEqual(fields('openai.gpt-oss-120b-1:0', { reasoning: { budget_tokens: 20000 } }), { reasoning_effort: 'high' });
    assert.equal(fields('meta.llama3-70b-instruct-v1:0', { reasoning_effort: 'high' }), undefined);
    assert.deepEqual(toConverse(req({ reasoning_effort: 'medium' }), target('anthropic.claude-3-7-sonnet-20250219-v1:0', { additionalModelRequestFields: { top_k: 40 } })).additionalModelRequestFields,
      { top_k: 40, thinking: { type: 'enabled', budget_tokens: 8192 } });
  });

  test('refused: image URLs to fetch, unknown image types, arguments that are not JSON', () => {
    const image = (url: string) => req({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }] });
    assert.equal(code(() => toConverse(image('https://example.com/cat.png'), target())), 'CAPABILITY_NOT_SUPPORTED');
    assert.equal(code(() => toConverse(image('data:image/bmp;base64,Qk0='), target())), 'CAPABILITY_NOT_SUPPORTED');
    const args = req({ messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{oops' } }] }] });
    assert.equal(code(() => toConverse(args, target())), 'VALIDATION_ERROR');
  });
});

describe('bedrock: Converse -> canonical', () => {
  const answer = (content: unknown[], stopReason: string, usage: Record<string, number> = { inputTokens: 5, outputTokens: 2, totalTokens: 7 }) => ({ output: { message: { role: 'assistant', content } }, stopReason, usage });

  test('stop reasons', () => {
    const finish = (stopReason: string) => bedrock.chat!.fromUpstream(answer([{ text: 'x' }], stopReason), target(), req()).choices[0]!.finish_reason;
    assert.deepEqual(['end_turn', 'stop_sequence', 'max_tokens', 'model_context_window_exceeded', 'tool_use', 'guardrail_intervened', 'content_filtered'].map(finish),
      ['stop', 'stop', 'length', 'length', 'tool_calls', 'content_filter', 'content_filter']);
  });

  test('text, tool calls and cached input tokens; reasoning blocks are left out', () => {
    const completion = bedrock.chat!.fromUpstream(answer([
      { reasoningContent: { reasoningText: { text: 'thinking...', signature: 'sig' } } },
      { text: 'Checking.' },
      { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Oslo' } } },
    ], 'tool_use', { inputTokens: 5, outputTokens: 9, cacheReadInputTokens: 100, cacheWriteInputTokens: 20, totalTokens: 134 }), target(), req());
    assert.deepEqual(completion.choices[0]!.message, { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'tooluse_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] });
    assert.deepEqual(completion.usage, { prompt_tokens: 125, completion_tokens: 9, total_tokens: 134, prompt_tokens_details: { cached_tokens: 100 } });
    assert.equal(completion.model, 'anthropic.claude-3-5-sonnet-20240620-v1:0');
  });

  test('the emulated JSON answer is the message text, finishing with stop', () => {
    const request = req({ response_format: { type: 'json_schema', json_schema: { name: 'person', schema: {} } } });
    const completion = bedrock.chat!.fromUpstream(answer([{ toolUse: { toolUseId: 't', name: 'person', input: { name: 'Ada' } } }], 'tool_use'), target(), request);
    assert.deepEqual(completion.choices[0]!.message, { role: 'assistant', content: '{"name":"Ada"}' });
    assert.equal(completion.choices[0]!.finish_reason, 'stop');
  });

  test('a body without output.message.content -> 502 UPSTREAM_ERROR', () => {
    assert.equal(code(() => bedrock.chat!.fromUpstream({ message: 'hm' }, target(), req())), 'UPSTREAM_ERROR');
  });

  test('HTTP errors: the x-amzn-errortype names the error; 424 model errors are upstream failures', () => {
    const error = bedrock.mapError(400, { message: 'Malformed input request' }, target(), { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
    assert.equal(error.code, 'UPSTREAM_BAD_REQUEST');
    assert.deepEqual(error.details, { provider: 'bedrock', upstreamStatus: 400, upstreamError: { type: 'ValidationException', message: 'Malformed input request' } });
    assert.equal(bedrock.mapError(424, { message: 'model failed' }, target()).code, 'UPSTREAM_ERROR');
    assert.equal(bedrock.mapError(429, { message: 'Too many requests' }, target(), { 'x-amzn-errortype': 'ThrottlingException' }).code, 'UPSTREAM_RATE_LIMITED');
    assert.equal(bedrock.mapError(408, { message: 'Model timed out' }, target()).code, 'UPSTREAM_TIMEOUT');
  });
});

function decode(events: StreamEvent[], request = req()): { chunks: ChatCompletionChunk[]; done: boolean; end(): ChatCompletionChunk[] } {
  const decoder = bedrock.chat!.streamDecoder(target(), request);
  const chunks: ChatCompletionChunk[] = [];
  let done = false;
  for (const event of events) {
    const out = decoder.event(event);
    chunks.push(...out.chunks);
    done ||= out.done === true;
  }
  return { chunks, done, end: () => decoder.end() };
}
const ev = (event: string, data: unknown): StreamEvent => ({ event, data: JSON.stringify(data) });
const START = ev('messageStart', { role: 'assistant', p: 'abc' });
const STOP = (stopReason: string) => ev('messageStop', { stopReason, p: 'ab' });
const METADATA = ev('metadata', { usage: { inputTokens: 11, outputTokens: 4, totalTokens: 15 }, metrics: { latencyMs: 200 }, p: 'a' });

describe('bedrock: the stream decoder', () => {
  test('usage comes only from metadata, on a last chunk of its own, which ends the stream', () => {
    const { chunks, done } = decode([START, ev('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' } }), ev('contentBlockStop', { contentBlockIndex: 0 }), STOP('end_turn'), METADATA]);
    assert.equal(done, true);
    assert.deepEqual(chunks.map((c) => c.usage ?? null), [null, null, null, { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 }]);
    assert.deepEqual(chunks.at(-1)!.choices, []);
    assert.equal(chunks.at(-2)!.choices[0]!.finish_reason, 'stop');
  });

  test('without metadata there is no usage chunk (the gateway estimates); without messageStop the stream was cut', () => {
    const complete = decode([START, STOP('max_tokens')]);
    assert.equal(complete.chunks.some((c) => c.usage), false);
    assert.deepEqual(complete.end(), []);
    assert.equal(code(() => decode([START, ev('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' } })]).end()), 'UPSTREAM_ERROR');
  });

  test('parallel tool calls are numbered among themselves, arguments in fragments; reasoning deltas are skipped', () => {
    const { chunks } = decode([
      START,
      ev('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'hmm' } } }),
      ev('contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'Let me check.' } }),
      ev('contentBlockStart', { contentBlockIndex: 2, start: { toolUse: { toolUseId: 'tu_a', name: 'get_weather' } } }),
      ev('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '{"city":' } } }),
      ev('contentBlockStart', { contentBlockIndex: 3, start: { toolUse: { toolUseId: 'tu_b', name: 'get_time' } } }),
      ev('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '"Oslo"}' } } }),
      ev('contentBlockDelta', { contentBlockIndex: 3, delta: { toolUse: { input: '{}' } } }),
      STOP('tool_use'), METADATA,
    ]);
    const got = assemble(chunks);
    assert.equal(got.text, 'Let me check.');
    assert.deepEqual(got.toolCalls, [{ id: 'tu_a', name: 'get_weather', arguments: '{"city":"Oslo"}' }, { id: 'tu_b', name: 'get_time', arguments: '{}' }]);
    assert.equal(got.finish, 'tool_calls');
  });

  test('the emulated JSON answer streams as text', () => {
    const request = req({ response_format: { type: 'json_schema', json_schema: { name: 'person', schema: {} } } });
    const got = assemble(decode([
      START,
      ev('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: 'tu', name: 'person' } } }),
      ev('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '{"name":' } } }),
      ev('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '"Ada"}' } } }),
      STOP('tool_use'), METADATA,
    ], request).chunks);
    assert.deepEqual({ text: got.text, toolCalls: got.toolCalls, finish: got.finish }, { text: '{"name":"Ada"}', toolCalls: [], finish: 'stop' });
  });

  test('exception frames mid-stream become the documented errors', () => {
    const cases: Array<[string, string, number]> = [
      ['throttlingException', 'UPSTREAM_RATE_LIMITED', 429],
      ['validationException', 'UPSTREAM_BAD_REQUEST', 400],
      ['modelStreamErrorException', 'UPSTREAM_ERROR', 502],
      ['internalServerException', 'UPSTREAM_ERROR', 502],
      ['serviceUnavailableException', 'UPSTREAM_ERROR', 502],
      ['modelTimeoutException', 'UPSTREAM_TIMEOUT', 504],
    ];
    for (const [type, expected, status] of cases) {
      const decoder = bedrock.chat!.streamDecoder(target(), req());
      decoder.event(START);
      assert.throws(() => decoder.event({ event: `exception:${type}`, data: JSON.stringify({ message: `${type} happened`, originalStatusCode: 500 }) }), (err: unknown) => {
        assert.ok(err instanceof GatewayError);
        assert.deepEqual([err.code, err.status], [expected, status], type);
        assert.match(err.message, new RegExp(`${type} happened`));
        assert.equal((err.details as { upstreamError: { type: string } }).upstreamError.type, type);
        return true;
      });
    }
  });

  test('a payload that is not JSON, or a tool delta for no tool block -> 502 UPSTREAM_ERROR', () => {
    assert.equal(code(() => decode([{ event: 'contentBlockDelta', data: '{"delta":' }])), 'UPSTREAM_ERROR');
    assert.equal(code(() => decode([START, ev('contentBlockDelta', { contentBlockIndex: 4, delta: { toolUse: { input: '{}' } } })])), 'UPSTREAM_ERROR');
  });
});
