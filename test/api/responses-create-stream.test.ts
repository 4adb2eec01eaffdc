/**
 * POST /v1/responses with stream true, through the official openai client's responses.stream(): the events and
 * the final response from the OpenAI chat fake and the Anthropic fake (streams split at awkward places), the
 * record written before response.completed, tool calls, an upstream failure mid-stream, and a cancel through
 * liveResponses (local) and through the record (another instance).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import { cancelResponse } from '../../core/store/responses.ts';
import { chunk, startFakeOpenAI, writeSplit, type FakeOpenAI } from '../fakes/openai.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { responsesConfig, startFakeAnthropic, type FakeAnthropic } from './responses-create-fixture.ts';

const sse = (c: unknown) => `data: ${JSON.stringify(c)}\n\n`;

describe('POST /v1/responses (streamed)', () => {
  let openai: FakeOpenAI;
  let anthropic: FakeAnthropic;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    openai = await startFakeOpenAI();
    anthropic = await startFakeAnthropic();
    gw = await startTestGateway(responsesConfig(openai.baseUrl, anthropic.url));
    const key = await gw.createKey({ scopes: { capabilities: ['responses'] } });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await openai.close();
    await anthropic.close();
  });
  beforeEach(() => {
    openai.reset();
    anthropic.handle = undefined;
    anthropic.answer = { text: 'Hello from Claude', toolCalls: [], finish: 'stop', usage: { prompt: 12, completion: 4 } };
  });

  const rowOf = async (id: string) => (await gw.gateway.services.db.query<Record<string, any>>('SELECT * FROM responses WHERE id = $1', [id]))[0];
  for (const [name, model, text, usage] of [['openai', 'gpt-4o-mini', 'Hello world', { input_tokens: 9, output_tokens: 2, total_tokens: 11 }], ['anthropic', 'claude', 'Hello from Claude', { input_tokens: 12, output_tokens: 4, total_tokens: 16, input_tokens_details: { cached_tokens: 0 } }]] as const) {
    test(`${name}: the events in order with sequence numbers, the final response, stored before response.completed`, async () => {
      const stream = client.responses.stream({ model, input: 'Say hello' });
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
      const final = await stream.finalResponse();
      assert.equal(final.output_text, text);
      assert.equal(final.status, 'completed');
      assert.deepEqual(final.usage, usage);
      assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
      const types = [...new Set(events.map((e) => e.type))];
      assert.deepEqual(types, [
        'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta',
        'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed',
      ]);
      const deltas = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []));
      assert.equal(deltas.join(''), text);
      const created = events[0] as OpenAI.Responses.ResponseCreatedEvent;
      assert.equal(created.response.status, 'in_progress');
      assert.equal(created.response.id, final.id);
      assert.equal(rowAtCompleted?.status, 'completed', 'the record was finished before response.completed was written');
      assert.deepEqual(rowAtCompleted?.output, completed?.output);
    });
  }

  test('tool calls stream as function_call items with argument deltas; a continuation carries them', async () => {
    openai.handle((req, res) => {
      const model = String(req.body.model);
      const call = (fn: Record<string, unknown>, first = false) => ({ tool_calls: [{ index: 0, ...(first ? { id: 'call_9', type: 'function' } : {}), function: fn }] });
      void writeSplit(res, [
        chunk(model, { role: 'assistant', content: '' }, null, { usage: null }),
        chunk(model, { content: 'Checking.' }, null, { usage: null }),
        chunk(model, call({ name: 'get_weather', arguments: '' }, true), null, { usage: null }),
        chunk(model, call({ arguments: '{"city":' }), null, { usage: null }),
        chunk(model, call({ arguments: '"Paris"}' }), null, { usage: null }),
        chunk(model, {}, 'tool_calls', { usage: null }),
        { ...chunk(model, {}), choices: [], usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 } },
      ].map(sse).concat('data: [DONE]\n\n'));
    });
    const stream = client.responses.stream({ model: 'gpt-4o-mini', input: 'Weather?', tools: [{ type: 'function', name: 'get_weather', parameters: {}, strict: false }] });
    const argDeltas: string[] = [];
    stream.on('response.function_call_arguments.delta', (e) => argDeltas.push(e.delta));
    let completed: OpenAI.Responses.Response | undefined;
    stream.on('response.completed', (e) => (completed = e.response));
    const final = await stream.finalResponse();
    assert.deepEqual(argDeltas, ['{"city":', '"Paris"}']);
    assert.equal(final.output.length, 2);
    assert.equal(final.output_text, 'Checking.');
    const call = final.output[1] as OpenAI.Responses.ResponseFunctionToolCall;
    assert.deepEqual({ type: call.type, call_id: call.call_id, name: call.name, arguments: call.arguments, status: call.status },
      { type: 'function_call', call_id: 'call_9', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' });
    assert.deepEqual((await rowOf(final.id))!.output, completed!.output);

    openai.reset();
    await client.responses.create({ model: 'gpt-4o-mini', previous_response_id: final.id, input: [{ type: 'function_call_output', call_id: 'call_9', output: 'sunny' }] });
    assert.deepEqual((openai.requests.at(-1)!.body.messages as unknown[]).slice(1), [
      { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_9', content: 'sunny' },
    ]);
  });

  test('an upstream failure mid-stream: an error event, then response.failed; the record is failed', async () => {
    openai.handle(async (req, res) => {
      const model = String(req.body.model);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse(chunk(model, { role: 'assistant', content: 'Hel' }, null, { usage: null })));
      await new Promise((resolve) => setTimeout(resolve, 20));
      res.destroy();
    });
    const response = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST', headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', input: 'Say hello', stream: true }),
    });
    const frames = (await response.text()).split('\n\n').filter((f) => f.trim() !== '').map((f) => JSON.parse(f.split('\n').find((l) => l.startsWith('data: '))!.slice(6)));
    const types = frames.map((f) => f.type);
    assert.deepEqual(types.slice(-2), ['error', 'response.failed']);
    const failed = frames.at(-1).response;
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error.code, frames.at(-2).code);
    assert.equal(failed.output[0].content[0].text, 'Hel');
    const row = (await rowOf(failed.id))!;
    assert.equal(row.status, 'failed');
    assert.equal(row.error.code, failed.error.code);
  });

  /** An Anthropic stream that sends one text delta and then hangs until the gateway lets go of it. */
  function hangingAnthropic(): Promise<void> {
    return new Promise((closed) => {
      anthropic.handle = (req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { id: 'msg_hang', type: 'message', role: 'assistant', content: [], model: req.json.model, stop_reason: null, usage: { input_tokens: 5, output_tokens: 1 } } })}\n\n`);
        res.write(`event: content_block_start\ndata: ${JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })}\n\n`);
        res.write(`event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Partial' } })}\n\n`);
        res.on('close', () => closed());
      };
    });
  }

  test('a cancel made on another instance (the record) stops the stream within a check, saves the partial output, aborts the upstream', async () => {
    const upstreamClosed = hangingAnthropic();
    const stream = client.responses.stream({ model: 'claude', input: 'Go on forever' });
    const types: string[] = [];
    let id = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.created') id = event.response.id;
      if (event.type === 'response.output_text.delta') {
        // What POST /v1/responses/:id/cancel does when the response streams on another instance.
        const tenant = (await rowOf(id))!.tenant_id as string;
        assert.equal((await cancelResponse(gw.gateway.services.db, tenant, id, Date.now()))?.status, 'cancelled');
      }
    }
    await upstreamClosed;
    const final = await stream.finalResponse();
    assert.equal(types.at(-1), 'response.incomplete');
    assert.equal(final.status, 'cancelled');
    assert.equal(final.output_text, 'Partial');
    assert.equal((final.output[0] as OpenAI.Responses.ResponseOutputMessage).status, 'incomplete');
    const row = (await rowOf(final.id))!;
    assert.equal(row.status, 'cancelled');
    assert.equal(row.output[0].content[0].text, 'Partial', 'the streaming instance saved what it had produced');
  });

  test('POST /v1/responses/:id/cancel mid-stream on the same instance: the upstream is aborted at once, the record keeps the partial output', async () => {
    const upstreamClosed = hangingAnthropic();
    const stream = client.responses.stream({ model: 'claude', input: 'Go on forever' });
    const types: string[] = [];
    let id = '';
    let cancelled: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.created') id = event.response.id;
      if (event.type === 'response.output_text.delta' && !cancelled) cancelled = await client.responses.cancel(id);
    }
    await upstreamClosed;
    // The client derives output_text on create and retrieve only: the cancel's answer is read from its output.
    const text = (cancelled!.output[0] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText;
    assert.deepEqual([cancelled!.status, text.text], ['cancelled', 'Partial'], 'the cancel answers what the stream had produced');
    assert.equal(types.at(-1), 'response.incomplete');
    const final = await stream.finalResponse();
    assert.deepEqual([final.status, final.output_text], ['cancelled', 'Partial']);
    const row = (await rowOf(id))!;
    assert.deepEqual([row.status, row.output[0].content[0].text], ['cancelled', 'Partial']);
    assert.deepEqual([(await client.responses.cancel(id)).status], ['cancelled'], 'a second cancel answers the record unchanged');
  });
});
