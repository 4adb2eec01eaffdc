/**
 * Replicate: a chat call as a prediction. Polling until it succeeds, failed and canceled predictions, the
 * follow-up limit, streams that fail, usage from metrics or estimated, and the prompt and input mapping.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { ChatCompletionRequest } from '../../core/canonical/chat.ts';
import { MAX_FOLLOW_UPS } from '../../core/dispatch/exchange.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import replicate from '../../providers/replicate/index.ts';
import { renderPrompt } from '../../providers/replicate/input.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const KEY = 'r8_test_token';

interface Seen { method: string; url: string; headers: IncomingMessage['headers']; json: any }
interface Script {
  /** The prediction creation answers (status and fields beyond id and urls). */
  create(json: any): Record<string, unknown>;
  /** The nth poll (1-based) of the prediction. */
  poll(n: number): Record<string, unknown>;
  stream?: string;
}

describe('replicate through the gateway', () => {
  let server: Server;
  let origin: string;
  let gw: TestGateway;
  let auth: Record<string, string>;
  let seen: Seen[] = [];
  let polls = 0;
  let script: Script;

  const prediction = (fields: Record<string, unknown>) => ({
    id: 'p1', model: 'meta/llama', version: 'v', input: {}, logs: '', error: null, created_at: '2025-06-15T12:00:00Z',
    urls: { get: `${origin}/v1/predictions/p1`, cancel: `${origin}/v1/predictions/p1/cancel`, stream: `${origin}/stream/p1` },
    ...fields,
  });

  before(async () => {
    server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (p: Buffer) => parts.push(p));
      req.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        const json = text ? JSON.parse(text) : null;
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, json });
        const send = (body: unknown, status = 200) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        };
        if (req.method === 'POST') return send(prediction(script.create(json)), 201);
        if (req.url === '/v1/predictions/p1') return send(prediction(script.poll(++polls)));
        if (req.url === '/stream/p1') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end(script.stream ?? 'event: done\ndata: {}\n\n');
          return;
        }
        send({ detail: 'not found' }, 404);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // Failed predictions count against the upstream: the breaker is kept from opening between these tests.
    gw = await startTestGateway(`
routing:
  retries: 0
upstream:
  breaker:
    volumeThreshold: 1000
providers:
  replicate:
    baseUrl: ${origin}/v1
    apiKey: ${KEY}
    options:
      pollIntervalMs: 1
      maxPollIntervalMs: 2
models:
  - id: llama
    provider: replicate
    upstreamModel: meta/llama
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth]
`);
    auth = { authorization: `Bearer ${await gw.createKey()}` };
  });
  after(async () => {
    await gw?.close();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    seen = [];
    polls = 0;
  });

  const ask = (extra: Record<string, unknown> = {}) =>
    postJson(`${gw.url}/v1/chat/completions`, { model: 'llama', messages: [{ role: 'user', content: 'Say hello' }], ...extra }, auth);
  const metrics = { predict_time: 0.3, input_token_count: 12, output_token_count: 3 };

  test('an unfinished prediction is polled at urls.get until it succeeds; its output array is the answer', async () => {
    script = {
      create: () => ({ status: 'starting', output: null }),
      poll: (n) => (n < 3 ? { status: 'processing', output: ['Hel'] } : { status: 'succeeded', output: ['Hel', 'lo', ' there'], metrics }),
    };
    const answer = await ask();
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.choices[0].message.content, 'Hello there');
    assert.equal(answer.body.choices[0].finish_reason, 'stop');
    assert.deepEqual(answer.body.usage, { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 });
    assert.deepEqual(seen.map((s) => `${s.method} ${s.url}`), ['POST /v1/models/meta/llama/predictions', ...Array(3).fill('GET /v1/predictions/p1')]);
    assert.equal(seen[0]!.headers.prefer, 'wait=60');
    assert.deepEqual(seen[0]!.json, { input: { prompt: 'Say hello' } });
    assert.ok(seen.every((s) => s.headers.authorization === `Bearer ${KEY}`));
  });

  test('a prediction that finished within Prefer: wait is not polled', async () => {
    script = { create: () => ({ status: 'succeeded', output: 'Done.', metrics }), poll: () => assert.fail('polled') };
    const answer = await ask();
    assert.equal(answer.body.choices[0].message.content, 'Done.');
    assert.equal(seen.length, 1);
  });

  test('a failed prediction -> 502 UPSTREAM_ERROR with the prediction\'s error', async () => {
    script = { create: () => ({ status: 'processing' }), poll: () => ({ status: 'failed', error: 'CUDA out of memory' }) };
    const answer = await ask();
    assert.equal(answer.status, 502);
    assert.equal(answer.body.error.code, 'UPSTREAM_ERROR');
    assert.match(answer.body.error.message, /prediction p1 failed: CUDA out of memory/);
    assert.equal(answer.body.error.details.upstreamError.status, 'failed');
  });

  test('a canceled prediction -> 502 UPSTREAM_ERROR', async () => {
    script = { create: () => ({ status: 'starting' }), poll: () => ({ status: 'canceled' }) };
    const answer = await ask();
    assert.equal(answer.status, 502);
    assert.match(answer.body.error.message, /was canceled before it finished/);
  });

  test(`a prediction still processing after ${MAX_FOLLOW_UPS} polls -> 504 UPSTREAM_TIMEOUT`, async () => {
    script = { create: () => ({ status: 'starting' }), poll: () => ({ status: 'processing' }) };
    const answer = await ask();
    assert.equal(answer.status, 504);
    assert.equal(answer.body.error.code, 'UPSTREAM_TIMEOUT');
    assert.equal(polls, MAX_FOLLOW_UPS);
  });

  test('no token counts in metrics: the usage is the gateway\'s estimate', async () => {
    script = { create: () => ({ status: 'succeeded', output: ['A rather long answer.'], metrics: { predict_time: 1 } }), poll: () => ({}) };
    const answer = await ask();
    assert.ok(answer.body.usage.prompt_tokens > 0 && answer.body.usage.completion_tokens > 0, JSON.stringify(answer.body.usage));
  });

  test('output that used the whole max_tokens allowance finishes with length', async () => {
    script = { create: () => ({ status: 'succeeded', output: ['one two three'], metrics: { input_token_count: 5, output_token_count: 3 } }), poll: () => ({}) };
    const answer = await ask({ max_tokens: 3 });
    assert.equal(answer.body.choices[0].finish_reason, 'length');
    assert.equal(seen[0]!.json.input.max_tokens, 3);
  });

  const stream = async () => {
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'llama', stream: true, messages: [{ role: 'user', content: 'Say hello' }] }),
    });
    assert.equal(response.status, 200);
    return (await response.text()).split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
  };

  test('a stream: created with stream true and no wait, then urls.stream followed', async () => {
    script = { create: () => ({ status: 'starting' }), poll: () => assert.fail('polled'), stream: 'event: output\ndata: Hello\n\nevent: output\ndata:  world\n\nevent: done\ndata: {}\n\n' };
    const events = await stream();
    assert.equal(events.at(-1), '[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    assert.equal(chunks.flatMap((c) => c.choices.map((ch: { delta: { content?: string } }) => ch.delta.content ?? '')).join(''), 'Hello world');
    assert.equal(seen[0]!.json.stream, true);
    assert.equal(seen[0]!.headers.prefer, undefined);
    assert.equal(seen[1]!.url, '/stream/p1');
    assert.equal(seen[1]!.headers.accept, 'text/event-stream');
  });

  test('an error event in the stream ends it with the error', async () => {
    script = { create: () => ({ status: 'starting' }), poll: () => ({}), stream: 'event: output\ndata: Hel\n\nevent: error\ndata: {"detail":"model crashed"}\n\n' };
    const events = await stream();
    const last = JSON.parse(events.at(-1)!);
    assert.equal(last.error.code, 'UPSTREAM_ERROR');
    assert.match(last.error.message, /model crashed/);
  });

  test('a stream that is done because the prediction was canceled is an error', async () => {
    script = { create: () => ({ status: 'starting' }), poll: () => ({}), stream: 'event: output\ndata: Hel\n\nevent: done\ndata: {"reason":"canceled"}\n\n' };
    const last = JSON.parse((await stream()).at(-1)!);
    assert.match(last.error.message, /reason canceled/);
  });

  test('a follow-up URL on another host gets no credential: the call fails instead', async () => {
    script = { create: () => ({ status: 'starting', urls: { get: 'https://evil.example/v1/predictions/p1' } }), poll: () => assert.fail('polled') };
    const answer = await ask();
    assert.equal(answer.status, 502);
    assert.match(answer.body.error.message, /not Replicate's/);
    assert.equal(seen.length, 1);
  });
});

describe('replicate: the translator', () => {
  const target = (options: Record<string, unknown> = {}, upstreamModel = 'meta/meta-llama-3-8b-instruct'): ProviderTarget =>
    ({ slug: 'replicate', baseUrl: 'https://api.replicate.com/v1', apiKey: KEY, headers: {}, options, upstreamModel });
  const chat = replicate.chat!;
  const req = (extra: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest => ({ model: 'x', messages: [{ role: 'user', content: 'hi' }], ...extra });

  test('model ids: owner/name, owner/name:version, a bare version, a deployment; anything else is refused', () => {
    const version = 'a'.repeat(64);
    const path = (model: string) => chat.toUpstream(req(), target({}, model), false);
    assert.equal(path('meta/llama').path, '/models/meta/llama/predictions');
    assert.equal(path(`acme/tuned:${version}`).path, '/predictions');
    assert.equal(JSON.parse(path(`acme/tuned:${version}`).body!).version, version);
    assert.equal(JSON.parse(path(version).body!).version, version);
    assert.equal(path('deployments/acme/chat').path, '/deployments/acme/chat/predictions');
    assert.throws(() => path('llama'), (e: GatewayError) => e.code === 'UPSTREAM_BAD_REQUEST');
  });

  test('input: stop sequences as one string, the configured max-tokens field, extra fixed inputs', () => {
    const built = chat.toUpstream(req({ stop: ['</s>', 'User:'], max_tokens: 64, temperature: 0.4, top_p: 0.9, seed: 3 }), target({ maxTokensField: 'max_new_tokens', input: { top_k: 40 }, waitSeconds: 10 }), false);
    assert.equal(built.headers.prefer, 'wait=10');
    assert.deepEqual(JSON.parse(built.body!).input, { top_k: 40, prompt: 'hi', max_new_tokens: 64, temperature: 0.4, top_p: 0.9, stop_sequences: '</s>,User:', seed: 3 });
  });

  test('a conversation renders as a transcript with a system prompt', () => {
    assert.deepEqual(renderPrompt([
      { role: 'system', content: 'Be kind.' },
      { role: 'developer', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: [{ type: 'text', text: 'Who are you?' }] },
    ]), { system_prompt: 'Be kind.\n\nBe brief.', prompt: 'User: Hi\n\nAssistant: Hello!\n\nUser: Who are you?\n\nAssistant:' });
    assert.deepEqual(renderPrompt([{ role: 'user', content: 'Just this' }]), { prompt: 'Just this' });
  });

  test('polls back off by half again each time, up to the longest wait', () => {
    const delays = [0, 1, 2, 3, 10].map((step) => chat.followUp!({ status: 'processing', urls: { get: 'https://api.replicate.com/v1/predictions/p' } }, target({ pollIntervalMs: 400, maxPollIntervalMs: 2000 }), false, step)!.delayMs);
    assert.deepEqual(delays, [400, 600, 900, 1350, 2000]);
  });

  test('a body that is not a prediction is malformed; a streaming model without urls.stream is an error', () => {
    assert.throws(() => chat.followUp!({ nope: true }, target(), false, 0), (e: GatewayError) => e.code === 'UPSTREAM_ERROR');
    assert.throws(() => chat.followUp!({ status: 'starting', urls: {} }, target(), true, 0), /no stream URL/);
  });

  test('the stream keeps each piece as sent, leading spaces and line breaks included, and must end with done', () => {
    const decoder = chat.streamDecoder(target(), req());
    const text = [{ event: 'output', data: 'Line one' }, { event: 'output', data: '\nline two' }, { event: 'output', data: ' end' }]
      .flatMap((e) => decoder.event(e).chunks).map((c) => c.choices[0]!.delta.content).join('');
    assert.equal(text, 'Line one\nline two end');
    assert.throws(() => decoder.end(), /before its done event/);
    assert.equal(decoder.event({ event: 'done', data: '{}' }).done, true);
    assert.deepEqual(decoder.end(), []);
  });

  test('errors: the problem detail is the message', () => {
    const err = replicate.mapError(422, { title: 'Input validation failed', detail: '- input.prompt: Required', status: 422 }, target());
    assert.equal(err.code, 'UPSTREAM_BAD_REQUEST');
    assert.match(err.message, /input\.prompt: Required/);
    assert.equal(replicate.mapError(401, { detail: 'Unauthenticated' }, target()).code, 'UPSTREAM_ERROR');
  });
});
