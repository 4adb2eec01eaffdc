/**
 * OpenTelemetry traces: with OTEL_* set, an in-process OTLP/HTTP collector receives a SERVER span per request,
 * parented on the caller's traceparent, and a CLIENT span per upstream attempt with the GenAI conventions (token
 * counts from the provider's usage, after the stream for a stream); the provider receives that attempt's
 * traceparent. Traces off: tracing-off.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chunk, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { chatConfig, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { incoming, spansOf, startCollector, STATUS_ERROR, type Collector, type Span } from '../helpers/otlp-collector.ts';

const genAiKeys = (span: Span) => Object.keys(span.attrs).filter((key) => key.startsWith('gen_ai.'));

describe('traces on (OTEL_EXPORTER_OTLP_ENDPOINT set)', () => {
  let fake: FakeOpenAI;
  let collector: Collector;
  let gateway: TestGateway;
  let key: string;

  before(async () => {
    fake = await startFakeOpenAI();
    collector = await startCollector();
    gateway = await startTestGateway(chatConfig(fake.baseUrl), {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '20', OTEL_SERVICE_NAME: 'aigw-test' },
    });
    key = await gateway.createKey();
  });

  after(async () => {
    await gateway?.close();
    await fake?.close();
    await collector?.close();
  });

  test('a chat answer: a server span under the caller\'s traceparent, a GenAI upstream span with its tokens, its traceparent upstream', async () => {
    fake.reset();
    const { traceId, parentId } = incoming();
    const prompt = 'a prompt that must never be exported';
    const response = await postJson(`${gateway.url}/v1/chat/completions`, {
      model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt }], max_tokens: 50, temperature: 0.5, top_p: 0.9,
    }, { authorization: `Bearer ${key}`, traceparent: `00-${traceId}-${parentId}-01`, tracestate: 'vendor=abc' });
    assert.equal(response.status, 200);

    const { server, upstream: [client] } = await spansOf(collector, traceId, 1);
    assert.equal(server.parentSpanId, parentId);
    assert.equal(server.name, 'POST /v1/chat/completions');
    assert.equal(server.attrs['http.request.method'], 'POST');
    assert.equal(server.attrs['http.route'], '/v1/chat/completions');
    assert.equal(server.attrs['url.path'], '/v1/chat/completions');
    assert.equal(server.attrs['http.response.status_code'], 200);
    assert.equal(server.attrs['aigw.request_id'], response.headers.get('x-request-id'));
    assert.deepEqual(genAiKeys(server), [], 'gen_ai.* only on the upstream span');

    assert.equal(client!.parentSpanId, server.spanId);
    assert.equal(client!.name, 'chat gpt-4o-mini-2024-07-18');
    assert.deepEqual({
      operation: client!.attrs['gen_ai.operation.name'],
      provider: client!.attrs['gen_ai.provider.name'],
      model: client!.attrs['gen_ai.request.model'],
      maxTokens: client!.attrs['gen_ai.request.max_tokens'],
      temperature: client!.attrs['gen_ai.request.temperature'],
      topP: client!.attrs['gen_ai.request.top_p'],
      responseModel: client!.attrs['gen_ai.response.model'],
      responseId: client!.attrs['gen_ai.response.id'],
      finish: client!.attrs['gen_ai.response.finish_reasons'],
      input: client!.attrs['gen_ai.usage.input_tokens'],
      output: client!.attrs['gen_ai.usage.output_tokens'],
      address: client!.attrs['server.address'],
      port: client!.attrs['server.port'],
    }, {
      operation: 'chat', provider: 'openai', model: 'gpt-4o-mini-2024-07-18', maxTokens: 50, temperature: 0.5, topP: 0.9,
      responseModel: 'gpt-4o-mini-2024-07-18', responseId: 'chatcmpl-fake1', finish: ['stop'], input: 9, output: 2,
      address: '127.0.0.1', port: Number(new URL(fake.url).port),
    });
    assert.equal(client!.status?.code ?? 0, 0);

    const sent = fake.requests.at(-1)!.headers;
    assert.equal(sent.traceparent, `00-${traceId}-${client!.spanId}-01`, 'the provider sees the upstream span as its parent');
    assert.equal(sent.tracestate, 'vendor=abc');
    const exported = collector.payloads.join('\n');
    for (const secret of [prompt, 'sk-upstream-secret', key, 'Hello world']) assert.ok(!exported.includes(secret), `${secret} is never exported`);
  });

  test('a stream: the upstream span ends after the stream, with the usage it reported', async () => {
    fake.reset();
    const { traceId, parentId } = incoming();
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, traceparent: `00-${traceId}-${parentId}-01` },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } }),
    });
    assert.equal(response.status, 200);
    const text = await response.text();
    assert.match(text, /\[DONE\]/);

    const { server, upstream: [client] } = await spansOf(collector, traceId, 1);
    assert.equal(client!.parentSpanId, server.spanId);
    assert.equal(client!.attrs['gen_ai.usage.input_tokens'], 9);
    assert.equal(client!.attrs['gen_ai.usage.output_tokens'], 2);
    assert.deepEqual(client!.attrs['gen_ai.response.finish_reasons'], ['stop']);
    assert.equal(client!.status?.code ?? 0, 0);
    assert.deepEqual(genAiKeys(server), []);
  });

  test('an upstream 500: each attempt is its own span, failed with error.type, and so is the server span', async () => {
    fake.handle((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'boom', type: 'server_error' } }));
    });
    const { traceId, parentId } = incoming();
    const response = await postJson(`${gateway.url}/v1/chat/completions`, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      { authorization: `Bearer ${key}`, traceparent: `00-${traceId}-${parentId}-01` });
    fake.reset();
    assert.ok(response.status >= 500, `status ${response.status}`);

    // routing.retries defaults to 1: two attempts on the one target.
    const { server, upstream } = await spansOf(collector, traceId, 2);
    for (const client of upstream) {
      assert.equal(client.parentSpanId, server.spanId);
      assert.equal(client.status?.code, STATUS_ERROR);
      assert.equal(client.attrs['error.type'], '500');
      assert.equal(client.attrs['http.response.status_code'], 500);
      assert.equal(client.attrs['gen_ai.usage.input_tokens'], undefined);
    }
    assert.notEqual(upstream[0]!.spanId, upstream[1]!.spanId);
    assert.equal(server.status?.code, STATUS_ERROR);
    assert.equal(server.attrs['http.response.status_code'], response.status);
    assert.equal(server.attrs['error.type'], response.body.error.code);
  });

  test('a request without a traceparent starts a new trace, and the provider gets its upstream span', async () => {
    fake.reset();
    const response = await postJson(`${gateway.url}/v1/chat/completions`, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      { authorization: `Bearer ${key}`, traceparent: 'not-a-traceparent' });
    assert.equal(response.status, 200);
    const sent = String(fake.requests.at(-1)!.headers.traceparent);
    const [, traceId, spanId] = sent.split('-');
    const { server, upstream: [client] } = await spansOf(collector, traceId!, 1);
    assert.equal(server.parentSpanId || undefined, undefined);
    assert.equal(client!.spanId, spanId);
  });
  test('/proxy: the provider gets the caller\'s trace, continued by the gateway\'s span instead of the caller\'s', async () => {
    fake.reset();
    const proxyKey = await gateway.createKey({ scopes: { capabilities: ['proxy'] } });
    const { traceId, parentId } = incoming();
    const response = await postJson(`${gateway.url}/proxy/openai/chat/completions`, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      { authorization: `Bearer ${proxyKey}`, traceparent: `00-${traceId}-${parentId}-01` });
    assert.equal(response.status, 200);
    const { server } = await spansOf(collector, traceId, 0);
    assert.equal(server.parentSpanId, parentId);
    assert.deepEqual(genAiKeys(server), []);
    assert.equal(fake.requests.at(-1)!.headers.traceparent, `00-${traceId}-${server.spanId}-01`);
  });

  test('a stream the client leaves: the upstream span ends failed, with error.type aborted', async () => {
    let opened!: () => void;
    const streaming = new Promise<void>((resolve) => (opened = resolve));
    fake.handle((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk(String(req.body.model), { role: 'assistant', content: 'Hel' }))}\n\n`);
      opened();
      // Holds the stream open until the gateway drops it.
    });
    const { traceId, parentId } = incoming();
    const controller = new AbortController();
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      signal: controller.signal,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, traceparent: `00-${traceId}-${parentId}-01` },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    assert.equal(response.status, 200);
    await streaming;
    await response.body!.getReader().read();
    controller.abort();
    const { upstream: [client] } = await spansOf(collector, traceId, 1);
    fake.reset();
    assert.equal(client!.status?.code, STATUS_ERROR);
    assert.equal(client!.attrs['error.type'], 'aborted');
  });
});
