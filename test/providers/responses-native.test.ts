/**
 * The native Responses translators of openai and azure-openai (the request each places, how each reads an
 * unknown previous_response_id), the contract's check of a declared `responses`, and the native stream reader.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NativeStreamReader } from '../../core/canonical/responses-native-stream.ts';
import { chatCompletionOfNative, nativeResponsesRequest } from '../../core/canonical/responses-native.ts';
import { defineProvider, type ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { azureOpenAi } from '../../providers/azure-openai/index.ts';
import openai from '../../providers/openai/index.ts';

const target = (slug: string, extra: Partial<ProviderTarget> = {}): ProviderTarget =>
  ({ slug, baseUrl: 'http://127.0.0.1:1', apiKey: 'k', headers: {}, options: {}, upstreamModel: 'gpt-4.1', ...extra });

describe('native Responses translators', () => {
  test('openai: POST /responses, the upstream model, Bearer and organization; stream true only when streaming', () => {
    const request = openai.responses!.toUpstream({ input: 'hi', store: true }, target('openai', { options: { organization: 'org-1' } }), false);
    assert.equal(request.path, '/responses');
    assert.equal(request.headers.authorization, 'Bearer k');
    assert.equal(request.headers['openai-organization'], 'org-1');
    assert.deepEqual(JSON.parse(request.body!), { model: 'gpt-4.1', input: 'hi', store: true });
    assert.equal(JSON.parse(openai.responses!.toUpstream({ input: 'hi' }, target('openai'), true).body!).stream, true);
  });

  test('azure-openai: the v1 path without api-version, the deployment as model, api-key', () => {
    const request = azureOpenAi.responses!.toUpstream({ input: 'hi' }, target('azure-openai', { options: { apiVersion: '2025-01-01-preview', deployments: { 'gpt-4.1': 'prod' } } }), false);
    assert.equal(request.path, '/v1/responses');
    assert.equal(request.headers['api-key'], 'k');
    assert.equal(request.headers.authorization, undefined);
    assert.deepEqual(JSON.parse(request.body!), { model: 'prod', input: 'hi' });
  });

  test('an unknown previous_response_id: OpenAI\'s 400 previous_response_not_found, or an error naming the param; nothing else', () => {
    const forgot = (status: number, body: unknown) => openai.responses!.forgotPrevious(openai.mapError(status, body, target('openai')));
    assert.equal(forgot(400, { error: { message: "Previous response with id 'resp_1' not found.", type: 'invalid_request_error', param: 'previous_response_id', code: 'previous_response_not_found' } }), true);
    assert.equal(forgot(404, { error: { message: 'not found', type: 'invalid_request_error', param: 'previous_response_id', code: null } }), true);
    assert.equal(forgot(400, { error: { message: "Invalid 'input'", type: 'invalid_request_error', param: 'input', code: null } }), false);
    assert.equal(forgot(500, { error: { message: 'boom', param: 'previous_response_id' } }), false);
    assert.equal(azureOpenAi.responses!.forgotPrevious(azureOpenAi.mapError(400, { error: { message: 'x', code: 'previous_response_not_found', param: 'previous_response_id' } }, target('azure-openai'))), true);
    assert.equal(openai.responses!.forgotPrevious(new GatewayError('UPSTREAM_TIMEOUT', 'slow')), false);
  });

  test('a provider declaring responses without its translator is refused', () => {
    assert.throws(() => defineProvider({
      slug: 'half', family: 'half', displayName: 'Half', configSchema: { type: 'object' }, capabilities: { responses: { stream: true } },
      mapError: () => new GatewayError('UPSTREAM_ERROR', 'x'),
    }), /declares responses but has no responses translator/);
  });
});

describe('the native request and answer', () => {
  test('a file_search tool, a gateway file id or a reasoning budget keep a request on chat; web_search only where the provider runs it', () => {
    const base = { model: 'm', input: 'hi' };
    const input = [{ type: 'message' as const, role: 'user' as const, content: 'hi' }];
    assert.equal(nativeResponsesRequest({ ...base, tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] }, input, [], { builtInTools: ['web_search'] }), null);
    assert.equal(nativeResponsesRequest({ ...base, reasoning: { budget_tokens: 100 } }, input, [], {}), null);
    const withFile = [{ type: 'message' as const, role: 'user' as const, content: [{ type: 'input_file' as const, file_id: 'file-x' }] }];
    assert.equal(nativeResponsesRequest(base, withFile, [], {}), null);
    assert.equal(nativeResponsesRequest({ ...base, tools: [{ type: 'web_search' }] }, input, [], {}), null);
    assert.ok(nativeResponsesRequest({ ...base, tools: [{ type: 'web_search' }] }, input, [], { builtInTools: ['web_search'] }));
  });

  test('a previous turn without a native provider id (none, or a chat completion\'s): the whole conversation at once', () => {
    const input = [{ type: 'message' as const, role: 'user' as const, content: 'again' }];
    for (const providerResponseId of [null, 'chatcmpl-abc']) {
      const native = nativeResponsesRequest({ model: 'm', input: 'again' }, input, [{ input: [{ role: 'user', content: 'first' }], output: [], providerResponseId }], {})!;
      assert.equal(native.fallback, null);
      assert.deepEqual(native.body.input, [{ type: 'message', role: 'user', content: 'first' }, ...input]);
      assert.equal(native.body.previous_response_id, undefined);
    }
    const named = nativeResponsesRequest({ model: 'm', input: 'again' }, input, [{ input: [], output: [], providerResponseId: 'resp_1' }], {})!;
    assert.equal(named.body.previous_response_id, 'resp_1');
  });

  test('the native answer as chat: text, function calls, refusal, an incomplete end, usage with details', () => {
    const chat = chatCompletionOfNative({
      id: 'resp_1', model: 'gpt-4.1', status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' },
      output: [
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'message', content: [{ type: 'output_text', text: 'Hi ' }, { type: 'refusal', refusal: 'no' }, { type: 'output_text', text: 'there' }] },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      ],
      usage: { input_tokens: 5, output_tokens: 3, total_tokens: 8, input_tokens_details: { cached_tokens: 1 }, output_tokens_details: { reasoning_tokens: 2 } },
    }, 'openai', 'fallback');
    const choice = chat.choices[0]!;
    assert.equal(choice.message.content, 'Hi there');
    assert.equal(choice.message.refusal, 'no');
    assert.deepEqual(choice.message.tool_calls, [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }]);
    assert.equal(choice.finish_reason, 'length');
    assert.deepEqual(chat.usage, { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8, prompt_tokens_details: { cached_tokens: 1 }, completion_tokens_details: { reasoning_tokens: 2 } });
    assert.throws(() => chatCompletionOfNative({ id: 'r', status: 'failed', output: [], error: { code: 'server_error', message: 'boom' } }, 'openai', 'm'), /boom/);
  });

  test('the stream reader: deltas, calls keyed by their index among calls, the end with usage; a close before the end fails', () => {
    const reader = new NativeStreamReader('openai', 'gpt-4.1');
    const ev = (event: Record<string, unknown>) => reader.event(JSON.stringify(event));
    assert.equal(ev({ type: 'response.created', response: { id: 'resp_1', model: 'gpt-4.1-x', output: [] } }).chunks[0]!.id, 'resp_1');
    assert.deepEqual(ev({ type: 'response.output_text.delta', output_index: 0, delta: 'Hi' }).chunks[0]!.choices[0]!.delta, { content: 'Hi' });
    ev({ type: 'response.output_item.added', output_index: 1, item: { type: 'reasoning', id: 'rs' } });
    const added = ev({ type: 'response.output_item.added', output_index: 2, item: { type: 'function_call', call_id: 'c1', name: 'f', arguments: '' } });
    assert.deepEqual(added.chunks[0]!.choices[0]!.delta.tool_calls, [{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '' } }]);
    assert.deepEqual(ev({ type: 'response.function_call_arguments.delta', output_index: 2, delta: '{"a"' }).chunks[0]!.choices[0]!.delta.tool_calls, [{ index: 0, function: { arguments: '{"a"' } }]);
    assert.throws(() => ev({ type: 'response.function_call_arguments.delta', output_index: 5, delta: 'x' }), /unknown function call/);
    assert.throws(() => new NativeStreamReader('openai', 'm').end(), /cut short/);
    const end = ev({ type: 'response.completed', response: { id: 'resp_1', status: 'completed', output: [], usage: { input_tokens: 2, output_tokens: 1, total_tokens: 3 } } });
    assert.equal(end.done, true);
    assert.equal(end.chunks[0]!.choices[0]!.finish_reason, 'tool_calls');
    assert.deepEqual(end.chunks[0]!.usage, { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 });
    assert.equal(reader.final?.id, 'resp_1');
    assert.deepEqual(reader.end(), []);
    assert.throws(() => new NativeStreamReader('openai', 'm').event('{"type":"error","code":"server_error","message":"overloaded"}'), /overloaded/);
  });
});
