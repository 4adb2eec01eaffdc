/**
 * An upstream that closes its stream cleanly before it is finished (no finish reason, no [DONE]), through each
 * streaming endpoint: the caller gets that endpoint's error event and never the [DONE] or message_stop that would
 * say the answer is complete, and the usage record says the stream failed. A stream that ends before its first
 * chunk is answered 502 instead of a 200 holding only an error.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import { chunk, writeSplit, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { createKey, recordsOf } from '../helpers/usage.ts';

const config = (baseUrl: string) => `
providers:
  openai:
    baseUrl: ${baseUrl}
    apiKey: sk-upstream
models:
  - id: plain
    provider: openai
routing:
  retries: 0
upstream:
  breaker:
    volumeThreshold: 1000
pipelines:
  - name: chat
    routes: [/v1/chat/completions, /v1/messages, /v1/completions]
    plugins: [auth, usage]
`;

/** The SSE blocks of a response body, each as {event, data}. */
function blocks(text: string): Array<{ event: string | null; data: string }> {
  return text.split('\n\n').filter((b) => b.trim() !== '').map((block) => {
    const lines = block.split('\n');
    const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? null;
    return { event, data: lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n') };
  });
}

describe('a truncated upstream stream, per endpoint', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let headers: Record<string, string>;

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(config(fake.baseUrl));
    const { key } = await createKey(gw, { scopes: { capabilities: ['chat', 'completions'] } });
    headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  });
  after(async () => {
    await gw.close();
    await fake.close();
  });
  afterEach(() => fake.reset());

  /** Two text chunks, then a clean close: no finish reason, no usage, no [DONE]; every event split in two. */
  const closeMidAnswer = () => fake.handle((req, res) => writeSplit(res, [
    `data: ${JSON.stringify(chunk(String(req.body.model), { role: 'assistant', content: '' }))}\n\n`,
    `data: ${JSON.stringify(chunk(String(req.body.model), { content: 'Hel' }))}\n\n`,
    `data: ${JSON.stringify(chunk(String(req.body.model), { content: 'lo, wor' }))}\n\n`,
  ]));

  async function stream(path: string, body: Record<string, unknown>) {
    const requestId = randomUUID();
    const response = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { ...headers, 'x-request-id': requestId }, body: JSON.stringify({ ...body, stream: true }) });
    return { status: response.status, events: blocks(await response.text()), requestId };
  }

  async function assertFailedRecord(requestId: string) {
    const [record] = await recordsOf(gw, requestId);
    assert.ok(record, 'the request has its usage record');
    assert.equal(record.status, 'failed');
    assert.equal(record.error_code, 'UPSTREAM_ERROR');
    assert.equal(record.estimated, true, 'the text the caller received is counted as an estimate');
    assert.ok(record.completion_tokens > 0);
  }

  test('chat: the text so far, then a data: {"error"} event with UPSTREAM_ERROR, and no [DONE]', async () => {
    closeMidAnswer();
    const { status, events, requestId } = await stream('/v1/chat/completions', { model: 'plain', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(status, 200);
    assert.ok(!events.some((e) => e.data === '[DONE]'), 'no [DONE]');
    const parsed = events.map((e) => JSON.parse(e.data));
    assert.equal(parsed.map((c) => c.choices?.[0]?.delta?.content ?? '').join(''), 'Hello, wor');
    const last = parsed.at(-1);
    assert.equal(last.error.code, 'UPSTREAM_ERROR');
    assert.match(last.error.message, /closed the stream before data: \[DONE\]/);
    await assertFailedRecord(requestId);
  });

  test('messages: the text so far, then event: error, and no message_delta or message_stop', async () => {
    closeMidAnswer();
    const { status, events, requestId } = await stream('/v1/messages', { model: 'plain', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(status, 200);
    const names = events.map((e) => e.event);
    assert.equal(names[0], 'message_start');
    assert.ok(!names.includes('message_stop') && !names.includes('message_delta'), names.join(','));
    assert.equal(names.at(-1), 'error');
    const error = JSON.parse(events.at(-1)!.data);
    assert.equal(error.type, 'error');
    assert.equal(error.error.type, 'server_error');
    assert.match(error.error.message, /cut short/);
    await assertFailedRecord(requestId);
  });

  test('completions: the text so far, then the legacy error event, and no [DONE]', async () => {
    closeMidAnswer();
    const { status, events, requestId } = await stream('/v1/completions', { model: 'plain', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(status, 200);
    assert.ok(!events.some((e) => e.data === '[DONE]'), 'no [DONE]');
    const parsed = events.map((e) => JSON.parse(e.data));
    assert.equal(parsed.slice(0, -1).map((c) => c.choices[0].text).join(''), 'Hello, wor');
    assert.deepEqual(Object.keys(parsed.at(-1).error).sort(), ['message', 'type']);
    assert.match(parsed.at(-1).error.message, /cut short/);
    await assertFailedRecord(requestId);
  });

  test('a stream that closes before its first chunk: 502 UPSTREAM_ERROR, not a 200 holding only an error', async () => {
    fake.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(': keep-alive\n\n');
    });
    const chat = await postJson(`${gw.url}/v1/chat/completions`, { model: 'plain', stream: true, messages: [{ role: 'user', content: 'hi' }] }, headers);
    assert.equal(chat.status, 502);
    assert.equal(chat.body.error.code, 'UPSTREAM_ERROR');
    const messages = await postJson(`${gw.url}/v1/messages`, { model: 'plain', stream: true, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, headers);
    assert.equal(messages.status, 502);
    assert.equal(messages.body.type, 'error');
  });

  test('a stream that lost only its [DONE] after the finish reason completes, with [DONE] to the caller', async () => {
    fake.handle((req, res) => writeSplit(res, [
      `data: ${JSON.stringify(chunk(String(req.body.model), { role: 'assistant', content: 'Hi' }))}\n\n`,
      `data: ${JSON.stringify(chunk(String(req.body.model), {}, 'stop'))}\n\n`,
    ]));
    const { status, events } = await stream('/v1/chat/completions', { model: 'plain', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(status, 200);
    assert.equal(events.at(-1)!.data, '[DONE]');
    assert.ok(!events.some((e) => e.data.includes('"error"')));
  });
});
