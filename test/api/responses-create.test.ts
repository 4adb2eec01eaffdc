/**
 * POST /v1/responses, not streamed: the official openai client through the gateway to the OpenAI chat fake and
 * the Anthropic fake. Create, continue (the second upstream request carries the first turn), the provider rules,
 * store false, tenants, function calling, usage records, validation.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import { completion, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { ADMIN_TOKEN, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { recordsOf } from '../helpers/usage.ts';
import { hello, responsesConfig, startFakeAnthropic, type FakeAnthropic } from './responses-create-fixture.ts';

function toolCompletion(model: string) {
  const base = completion(model, '');
  base.choices[0] = {
    index: 0,
    message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] } as never,
    finish_reason: 'tool_calls',
    logprobs: null,
  };
  return base;
}

describe('POST /v1/responses (not streamed)', () => {
  let openai: FakeOpenAI;
  let anthropic: FakeAnthropic;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;

  before(async () => {
    openai = await startFakeOpenAI();
    anthropic = await startFakeAnthropic();
    gw = await startTestGateway(responsesConfig(openai.baseUrl, anthropic.url));
    key = await gw.createKey({ scopes: { capabilities: ['responses'] } });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await openai.close();
    await anthropic.close();
  });
  beforeEach(() => {
    openai.reset();
    anthropic.answer = hello();
  });

  const rowOf = async (id: string) => (await gw.gateway.services.db.query<Record<string, any>>('SELECT * FROM responses WHERE id = $1', [id]))[0];
  const sentToOpenAI = () => openai.requests.at(-1)!.body as Record<string, any>;

  test('a create on openai: the Response, stored before it is answered, usage recorded; the parameters map to chat', async () => {
    const { data, response } = await client.responses.create({
      model: 'gpt-4o-mini', input: 'Say hello', instructions: 'Be brief.', temperature: 0.5, top_p: 0.9, max_output_tokens: 64,
      reasoning: { effort: 'low' }, metadata: { topic: 'greeting' },
      tools: [{ type: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: {} }, strict: null }],
      tool_choice: { type: 'function', name: 'get_weather' },
    }).withResponse();
    assert.match(data.id, /^resp-[0-9a-f-]{36}$/);
    assert.equal(data.object, 'response');
    assert.equal(data.status, 'completed');
    assert.equal(data.output_text, 'Hello world');
    assert.equal(data.output.length, 1);
    const message = data.output[0] as OpenAI.Responses.ResponseOutputMessage;
    assert.equal(message.type, 'message');
    assert.equal(message.role, 'assistant');
    assert.equal(message.status, 'completed');
    assert.match(message.id, /^msg_[0-9a-f]{32}$/);
    assert.deepEqual(message.content, [{ type: 'output_text', text: 'Hello world', annotations: [] }]);
    assert.deepEqual(data.usage, { input_tokens: 9, output_tokens: 2, total_tokens: 11 });
    assert.deepEqual(data.metadata, { topic: 'greeting' });
    const body = data as unknown as Record<string, unknown>;
    assert.equal(body.provider, 'openai');
    assert.equal(body.provider_response_id, 'chatcmpl-fake1');
    assert.equal(response.headers.get('x-provider'), 'openai');

    assert.deepEqual(sentToOpenAI(), {
      model: 'gpt-4o-mini-2024-07-18',
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello' }],
      temperature: 0.5, top_p: 0.9, max_tokens: 64, reasoning_effort: 'low',
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: {} } } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });

    const row = (await rowOf(data.id))!;
    assert.equal(row.status, 'completed');
    assert.equal(row.provider, 'openai');
    assert.deepEqual(row.input, [{ type: 'message', role: 'user', content: 'Say hello' }]);
    assert.deepEqual(row.output, data.output);
    assert.equal(row.instructions, 'Be brief.');

    const records = await recordsOf(gw, response.headers.get('x-request-id')!);
    assert.equal(records.length, 1);
    assert.equal(records[0]!.prompt_tokens, 9);
    assert.equal(records[0]!.completion_tokens, 2);
  });

  test('anthropic: create, then continue; the second upstream request carries the first turn, not its instructions', async () => {
    anthropic.answer = hello('Paris is the capital.');
    const first = await client.responses.create({ model: 'claude', input: 'What is the capital of France?', instructions: 'Answer in one sentence.' });
    assert.equal(first.output_text, 'Paris is the capital.');
    assert.equal((first as unknown as { provider: string }).provider, 'anthropic');
    assert.equal((first as unknown as { provider_response_id: string }).provider_response_id, 'msg_01Conformance');

    anthropic.answer = hello('About 2 million.');
    const second = await client.responses.create({
      model: 'claude', previous_response_id: first.id, instructions: 'Be precise.',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'And its population?' }] }],
    });
    assert.equal(second.output_text, 'About 2 million.');
    assert.equal(second.previous_response_id, first.id);
    const sent = anthropic.requests.at(-1)!.json;
    assert.equal(sent.system, 'Be precise.');
    assert.deepEqual(sent.messages, [
      { role: 'user', content: 'What is the capital of France?' },
      { role: 'assistant', content: 'Paris is the capital.' },
      { role: 'user', content: 'And its population?' },
    ]);
  });

  test('the provider: a continuation keeps the previous one; naming another is FILE_PROVIDER_MISMATCH; `provider` pins a new one', async () => {
    const first = await client.responses.create({ model: 'both', input: 'Hi' });
    assert.equal((first as unknown as { provider: string }).provider, 'anthropic', 'the first target of the routing');

    const crossed = await postJson(`${gw.url}/v1/responses`, { model: 'both', input: 'Again', previous_response_id: first.id, provider: 'openai' }, { authorization: `Bearer ${key}` });
    assert.equal(crossed.status, 400);
    assert.equal(crossed.body.error.code, 'FILE_PROVIDER_MISMATCH');
    assert.deepEqual(crossed.body.error.details, { provider: 'openai', previous_provider: 'anthropic', previous_response_id: first.id });

    const before = openai.requests.length;
    const pinned = await client.responses.create({ model: 'both', input: 'Hi', provider: 'openai' } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    assert.equal((pinned as unknown as { provider: string }).provider, 'openai');
    assert.equal(openai.requests.length, before + 1);
    const next = await client.responses.create({ model: 'both', input: 'More', previous_response_id: pinned.id });
    assert.equal((next as unknown as { provider: string }).provider, 'openai', 'the continuation stays on openai');
  });

  test('an unknown previous_response_id, and another tenant\'s, are 404 NOT_FOUND; their responses stay apart', async () => {
    const unknown = await postJson(`${gw.url}/v1/responses`, { model: 'claude', input: 'x', previous_response_id: 'resp-00000000-0000-4000-8000-000000000000' }, { authorization: `Bearer ${key}` });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'NOT_FOUND');

    const tenant = await postJson(`${gw.url}/admin/v1/tenants`, { id: 'tenant-b', name: 'B' }, { authorization: `Bearer ${ADMIN_TOKEN}` });
    assert.equal(tenant.status, 201, JSON.stringify(tenant.body));
    const otherKey = await gw.createKey({ tenantId: 'tenant-b', scopes: { capabilities: ['responses'] } });
    const other = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: otherKey, maxRetries: 0 });
    const theirs = await other.responses.create({ model: 'claude', input: 'Mine' });
    assert.equal((await rowOf(theirs.id))!.tenant_id, 'tenant-b');
    await assert.rejects(client.responses.create({ model: 'claude', input: 'x', previous_response_id: theirs.id }), (err: InstanceType<typeof OpenAI.APIError>) => err.status === 404);
    const ours = await client.responses.create({ model: 'claude', input: 'Ours' });
    await assert.rejects(other.responses.create({ model: 'claude', input: 'x', previous_response_id: ours.id }), (err: InstanceType<typeof OpenAI.APIError>) => err.status === 404);
  });

  test('store false: the same Response with a fresh id, and no row', async () => {
    const data = await client.responses.create({ model: 'gpt-4o-mini', input: 'Say hello', store: false });
    assert.match(data.id, /^resp-/);
    assert.equal(data.output_text, 'Hello world');
    assert.equal(data.status, 'completed');
    assert.equal(await rowOf(data.id), undefined);
    const continued = await postJson(`${gw.url}/v1/responses`, { model: 'gpt-4o-mini', input: 'x', previous_response_id: data.id }, { authorization: `Bearer ${key}` });
    assert.equal(continued.status, 404);
  });

  test('function calling round trip: a function_call output item, then function_call_output continues the conversation', async () => {
    openai.handle((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const hasResult = (req.body.messages as Array<{ role: string }>).some((m) => m.role === 'tool');
      res.end(JSON.stringify(hasResult ? completion(String(req.body.model), 'It is sunny.') : toolCompletion(String(req.body.model))));
    });
    const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    const first = await client.responses.create({ model: 'gpt-4o-mini', input: 'Weather in Paris?', tools });
    assert.equal(first.output.length, 1);
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    assert.equal(call.type, 'function_call');
    assert.equal(call.call_id, 'call_1');
    assert.equal(call.name, 'get_weather');
    assert.equal(call.arguments, '{"city":"Paris"}');
    assert.equal(call.status, 'completed');
    assert.match(call.id!, /^fc_/);

    const second = await client.responses.create({
      model: 'gpt-4o-mini', previous_response_id: first.id, tools,
      input: [{ type: 'function_call_output', call_id: 'call_1', output: '{"sky":"sunny"}' }],
    });
    assert.equal(second.output_text, 'It is sunny.');
    assert.deepEqual(sentToOpenAI().messages, [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"sky":"sunny"}' },
    ]);
  });

  test('a length cut is incomplete, with incomplete_details', async () => {
    openai.handle((req, res) => {
      const body = completion(String(req.body.model), 'Hello');
      body.choices[0]!.finish_reason = 'length';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    const data = await client.responses.create({ model: 'gpt-4o-mini', input: 'Say hello', max_output_tokens: 1 });
    assert.equal(data.status, 'incomplete');
    assert.deepEqual(data.incomplete_details, { reason: 'max_output_tokens' });
    assert.equal((data.output[0] as OpenAI.Responses.ResponseOutputMessage).status, 'incomplete');
  });

  test('validation: clear VALIDATION_ERROR paths; item_reference refused; the capability is needed', async () => {
    const post = (body: unknown, auth = key) => postJson(`${gw.url}/v1/responses`, body, { authorization: `Bearer ${auth}` });
    const cases: Array<[unknown, string]> = [
      [{ model: 'claude' }, ''],
      [{ model: 'claude', input: 'x', temperature: 3 }, '/temperature'],
      [{ model: 'claude', input: 'x', top_p: 1.5 }, '/top_p'],
      [{ model: 'claude', input: 'x', max_output_tokens: 0 }, '/max_output_tokens'],
      [{ model: 'claude', input: 'x', reasoning: { effort: 'extreme' } }, '/reasoning'],
      [{ model: 'claude', input: 'x', text: { format: { type: 'json_object' } } }, ''],
      [{ model: 'claude', input: [{ role: 'tool', content: 'x' }] }, '/input/0'],
      [{ model: 'claude', input: [{ type: 'item_reference', id: 'msg_1' }] }, '/input/0/type'],
      [{ model: 'claude', input: [{ role: 'assistant', content: [{ type: 'input_image', image_url: 'https://x/y.png' }] }] }, '/input/0/content/0/type'],
    ];
    for (const [body, path] of cases) {
      const r = await post(body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.code, 'VALIDATION_ERROR', JSON.stringify(r.body));
      const paths = (r.body.error.details as Array<{ path: string }>).map((d) => d.path);
      assert.ok(paths.some((p) => p.startsWith(path)), `${JSON.stringify(body)}: ${JSON.stringify(r.body.error.details)}`);
    }
    const chatOnly = await gw.createKey({ scopes: { capabilities: ['chat'] } });
    const forbidden = await post({ model: 'claude', input: 'x' }, chatOnly);
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.error.code, 'AUTH_FORBIDDEN');
  });
});
