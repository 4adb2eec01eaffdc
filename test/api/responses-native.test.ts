/**
 * POST /v1/responses on openai's native Responses API, not streamed: the official openai client through the
 * gateway to the fake Responses API. The native output is what the caller gets and the record keeps; a
 * continuation names the provider's id of the previous response and sends only the new input; a provider that
 * forgot it gets the whole conversation once; usage is metered from the native usage.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import { RESPONSES_USAGE, startFakeResponsesApi, type FakeResponsesApi } from '../fakes/openai-responses.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { recordsOf } from '../helpers/usage.ts';
import { nativeConfig } from './responses-native-fixture.ts';

const USAGE = { input_tokens: 20, output_tokens: 7, total_tokens: 27, input_tokens_details: { cached_tokens: 4 }, output_tokens_details: { reasoning_tokens: 2 } };

describe('POST /v1/responses on a native Responses API (not streamed)', () => {
  let fake: FakeResponsesApi;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;

  before(async () => {
    fake = await startFakeResponsesApi();
    gw = await startTestGateway(nativeConfig(fake.url));
    key = await gw.createKey({ scopes: { capabilities: ['responses'] } });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await fake.close();
  });
  beforeEach(() => {
    fake.handle = undefined;
    fake.script = { text: 'Hello from the Responses API' };
  });

  const sent = (back = 1) => fake.requests.at(-back)!;
  const rowOf = async (id: string) => (await gw.gateway.services.db.query<Record<string, any>>('SELECT * FROM responses WHERE id = $1', [id]))[0];

  test('create: the native body upstream, the native output to the caller and the record, usage metered', async () => {
    const { data, response } = await client.responses.create({
      model: 'gpt-4.1', input: 'Say hello', instructions: 'Be brief.', temperature: 0.5, top_p: 0.9, max_output_tokens: 64,
      reasoning: { effort: 'low' }, metadata: { topic: 'greeting' },
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: true }, { type: 'web_search_preview' }],
      tool_choice: 'auto',
    }).withResponse();
    assert.equal(sent().url, '/v1/responses');
    assert.equal(sent().headers.authorization, 'Bearer sk-upstream-secret');
    assert.deepEqual(sent().json, {
      model: 'gpt-4.1', instructions: 'Be brief.',
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: true }, { type: 'web_search_preview' }],
      tool_choice: 'auto', temperature: 0.5, top_p: 0.9, max_output_tokens: 64, reasoning: { effort: 'low' }, store: true,
      input: [{ type: 'message', role: 'user', content: 'Say hello' }],
    });
    const upstream = fake.stored.get(String((data as unknown as { provider_response_id: string }).provider_response_id))!;
    assert.ok(upstream, 'provider_response_id is the upstream id');
    assert.match(data.id, /^resp-[0-9a-f-]{36}$/);
    assert.equal(data.output_text, 'Hello from the Responses API');
    assert.deepEqual(data.output, upstream.output, 'the native output items, verbatim');
    assert.deepEqual(data.usage, USAGE);
    assert.equal(data.model, 'gpt-4.1-2025-04-14');
    assert.deepEqual(data.metadata, { topic: 'greeting' });
    assert.equal(response.headers.get('x-provider'), 'openai');

    const row = (await rowOf(data.id))!;
    assert.equal(row.provider_response_id, upstream.id);
    assert.deepEqual(row.output, upstream.output);
    assert.deepEqual(row.usage, USAGE);
    const records = await recordsOf(gw, response.headers.get('x-request-id')!);
    assert.equal(records.length, 1);
    assert.equal(records[0]!.prompt_tokens, RESPONSES_USAGE.input_tokens);
    assert.equal(records[0]!.completion_tokens, RESPONSES_USAGE.output_tokens);
  });

  test('continue: previous_response_id is the provider id of the first, and only the new input goes up', async () => {
    fake.script = { text: 'Noted: blue.' };
    const first = await client.responses.create({ model: 'gpt-4.1', input: 'My favourite colour is blue.' });
    const upstreamFirst = (first as unknown as { provider_response_id: string }).provider_response_id;
    fake.script = { text: 'Blue.' };
    const next = await client.responses.create({ model: 'gpt-4.1', input: 'Which colour?', previous_response_id: first.id });
    assert.equal(next.output_text, 'Blue.');
    assert.equal(next.previous_response_id, first.id);
    assert.deepEqual(sent().json, {
      model: 'gpt-4.1', store: true, input: [{ type: 'message', role: 'user', content: 'Which colour?' }], previous_response_id: upstreamFirst,
    });
    assert.notEqual(upstreamFirst, first.id);
  });

  test('the provider forgot the previous response: the whole conversation goes once, without previous_response_id', async () => {
    fake.script = { text: 'Weather?', calls: [{ call_id: 'call_7', name: 'get_weather', arguments: '{"city":"Paris"}' }], extraItems: [
      { id: 'rs_1', type: 'reasoning', summary: [], encrypted_content: 'opaque' },
      { id: 'ws_1', type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'paris weather' } },
    ] };
    const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: false }];
    const first = await client.responses.create({ model: 'gpt-4.1', input: 'Weather in Paris?', tools });
    assert.equal(first.output.length, 4);
    fake.forget();
    fake.script = { text: 'Sunny in Paris.' };
    const before = fake.requests.length;
    const next = await client.responses.create({ model: 'gpt-4.1', previous_response_id: first.id, tools, input: [{ type: 'function_call_output', call_id: 'call_7', output: 'sunny' }] });
    assert.equal(next.output_text, 'Sunny in Paris.');
    assert.equal(fake.requests.length, before + 2);
    assert.equal(sent(2).json.previous_response_id, (first as unknown as { provider_response_id: string }).provider_response_id);
    const retried = sent().json;
    assert.equal(retried.previous_response_id, undefined);
    assert.deepEqual(retried.tools, tools);
    assert.deepEqual(retried.input, [
      { type: 'message', role: 'user', content: 'Weather in Paris?' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Weather?' }] },
      { type: 'function_call', call_id: 'call_7', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_7', output: 'sunny' },
    ]);
  });

  test('a first turn refused upstream is not retried; the error is the gateway\'s', async () => {
    fake.handle = (_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: "Invalid 'input': empty.", type: 'invalid_request_error', param: 'input', code: null } }));
    };
    const before = fake.requests.length;
    const answer = await postJson(`${gw.url}/v1/responses`, { model: 'gpt-4.1', input: 'x' }, { authorization: `Bearer ${key}` });
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error.code, 'UPSTREAM_BAD_REQUEST');
    assert.equal(fake.requests.length, before + 1);
  });

  test('store false: stored nowhere, upstream included', async () => {
    const data = await client.responses.create({ model: 'gpt-4.1', input: 'Say hello', store: false });
    assert.equal(sent().json.store, false);
    assert.equal(await rowOf(data.id), undefined);
    assert.equal(data.output_text, 'Hello from the Responses API');
  });

  test('incomplete at max_output_tokens: status incomplete, the native items kept', async () => {
    fake.script = { text: 'Hel', status: 'incomplete' };
    const data = await client.responses.create({ model: 'gpt-4.1', input: 'Say hello', max_output_tokens: 16 });
    assert.equal(data.status, 'incomplete');
    assert.deepEqual(data.incomplete_details, { reason: 'max_output_tokens' });
    assert.equal((data.output[0] as { status: string }).status, 'incomplete');
  });

  test('a reasoning budget, which the Responses API does not take, keeps the turn on chat (the fake has none: 404 there)', async () => {
    const answer = await postJson(`${gw.url}/v1/responses`, { model: 'gpt-4.1', input: 'x', reasoning: { budget_tokens: 1024 } }, { authorization: `Bearer ${key}` });
    assert.equal(sent().url, '/v1/chat/completions');
    assert.equal(answer.status, 400);
  });
});

describe('POST /v1/responses on azure-openai\'s native Responses API', () => {
  test('create then continue through /openai/v1/responses, the deployment as model, the api-key header; streamed too', async () => {
    const fake = await startFakeResponsesApi();
    const gw = await startTestGateway(nativeConfig(fake.url));
    try {
      const key = await gw.createKey({ scopes: { capabilities: ['responses'] } });
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
      fake.script = { text: 'Noted.' };
      const first = await client.responses.create({ model: 'azure-gpt', input: 'Remember 42.' });
      const sent = fake.requests.at(-1)!;
      assert.equal(sent.url, '/openai/v1/responses');
      assert.equal(sent.headers['api-key'], 'azure-key');
      assert.equal(sent.headers.authorization, undefined);
      assert.deepEqual(sent.json, { model: 'my-gpt41', store: true, input: [{ type: 'message', role: 'user', content: 'Remember 42.' }] });
      assert.equal((first as unknown as { provider: string }).provider, 'azure-openai');

      fake.script = { text: '42.' };
      const next = client.responses.stream({ model: 'azure-gpt', input: 'Which number?', previous_response_id: first.id });
      const final = await next.finalResponse();
      assert.equal(final.output_text, '42.');
      const continued = fake.requests.at(-1)!;
      assert.equal(continued.url, '/openai/v1/responses');
      assert.equal(continued.json.stream, true);
      assert.equal(continued.json.previous_response_id, (first as unknown as { provider_response_id: string }).provider_response_id);
      assert.deepEqual(continued.json.input, [{ type: 'message', role: 'user', content: 'Which number?' }]);
    } finally {
      await gw.close();
      await fake.close();
    }
  });
});
