/**
 * POST /v1/responses with stream true on openai's native Responses API: the fake's SSE events (cut at awkward
 * places) become the gateway's own Responses events, and response.completed carries the native Response's output,
 * which the record holds. Function-call argument deltas, a forgotten previous response, usage, a failure mid-stream.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import { RESPONSES_USAGE, startFakeResponsesApi, type FakeResponsesApi } from '../fakes/openai-responses.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { recordsOf } from '../helpers/usage.ts';
import { nativeConfig } from './responses-native-fixture.ts';

describe('POST /v1/responses on a native Responses API (streamed)', () => {
  let fake: FakeResponsesApi;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    fake = await startFakeResponsesApi();
    gw = await startTestGateway(nativeConfig(fake.url));
    const key = await gw.createKey({ scopes: { capabilities: ['responses'] } });
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

  const rowOf = async (id: string) => (await gw.gateway.services.db.query<Record<string, any>>('SELECT * FROM responses WHERE id = $1', [id]))[0];

  test('the events in order, the final response with the native output, stored before response.completed, usage metered', async () => {
    const { data: stream, response } = await client.responses.create({ model: 'gpt-4.1', input: 'Say hello', stream: true }).withResponse();
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    let rowAtCompleted: Record<string, any> | undefined;
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'response.completed') {
        completed = event.response;
        rowAtCompleted = await rowOf(event.response.id);
      }
    }
    assert.equal(fake.requests.at(-1)!.json.stream, true);
    assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
    assert.deepEqual([...new Set(events.map((e) => e.type))], [
      'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta',
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed',
    ]);
    const deltas = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []));
    assert.equal(deltas.join(''), 'Hello from the Responses API');
    const upstream = fake.stored.get(String((completed as unknown as { provider_response_id: string }).provider_response_id))!;
    assert.deepEqual(completed!.output, upstream.output, 'response.completed carries the native output');
    assert.equal(completed!.usage!.input_tokens, RESPONSES_USAGE.input_tokens);
    assert.equal(rowAtCompleted?.status, 'completed');
    assert.deepEqual(rowAtCompleted?.output, upstream.output);
    assert.equal(rowAtCompleted?.provider_response_id, upstream.id);
    const records = await recordsOf(gw, response.headers.get('x-request-id')!);
    assert.equal(records[0]!.prompt_tokens, RESPONSES_USAGE.input_tokens);
    assert.equal(records[0]!.completion_tokens, RESPONSES_USAGE.output_tokens);
  });

  test('responses.stream(): function-call argument deltas, the final response; a streamed continuation of a forgotten response', async () => {
    fake.script = { calls: [{ call_id: 'call_9', name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' }] };
    const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_weather', parameters: {}, strict: false }];
    const stream = client.responses.stream({ model: 'gpt-4.1', input: 'Weather?', tools });
    const argDeltas: string[] = [];
    for await (const event of stream) if (event.type === 'response.function_call_arguments.delta') argDeltas.push(event.delta);
    const final = await stream.finalResponse();
    assert.equal(argDeltas.join(''), '{"city":"Paris","unit":"c"}');
    const call = final.output.find((item) => item.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    assert.equal(call.call_id, 'call_9');
    assert.equal(call.arguments, '{"city":"Paris","unit":"c"}');

    fake.forget();
    fake.script = { text: 'Sunny.' };
    const next = client.responses.stream({ model: 'gpt-4.1', previous_response_id: final.id, tools, input: [{ type: 'function_call_output', call_id: 'call_9', output: 'sunny' }] });
    const answer = await next.finalResponse();
    assert.equal(answer.output_text, 'Sunny.');
    const [refused, retried] = fake.requests.slice(-2);
    assert.equal(typeof refused!.json.previous_response_id, 'string');
    assert.equal(retried!.json.previous_response_id, undefined);
    assert.deepEqual(retried!.json.input.slice(1), [
      { type: 'function_call', call_id: 'call_9', name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' },
      { type: 'function_call_output', call_id: 'call_9', output: 'sunny' },
    ]);
  });

  test('an error event mid-stream: the gateway\'s error event, then response.failed; the record is failed', async () => {
    fake.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const created = { id: 'resp_fail', object: 'response', status: 'in_progress', model: 'gpt-4.1', output: [] };
      res.write(`event: response.created\ndata: ${JSON.stringify({ type: 'response.created', sequence_number: 0, response: created })}\n\n`);
      res.write(`event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', sequence_number: 1, output_index: 0, content_index: 0, item_id: 'msg_1', delta: 'Hel' })}\n\nevent: err`);
      res.end(`or\ndata: ${JSON.stringify({ type: 'error', sequence_number: 2, code: 'server_error', message: 'The model had an error.', param: null })}\n\n`);
    };
    const response = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST', headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4.1', input: 'Say hello', stream: true }),
    });
    const frames = (await response.text()).split('\n\n').filter((f) => f.trim() !== '').map((f) => JSON.parse(f.split('\n').find((l) => l.startsWith('data: '))!.slice(6)));
    assert.deepEqual(frames.slice(-2).map((f) => f.type), ['error', 'response.failed']);
    assert.match(frames.at(-2).message, /The model had an error/);
    const failed = frames.at(-1).response;
    assert.equal(failed.output[0].content[0].text, 'Hel');
    const row = (await rowOf(failed.id))!;
    assert.equal(row.status, 'failed');
  });
});
