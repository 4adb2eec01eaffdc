/**
 * Upstream answers past the size limits (upstream.maxFrameBytes, upstream.maxBodyBytes), through a gateway, from
 * a loopback upstream that writes as fast as it is read: the caller gets 502 UPSTREAM_ERROR (or, once the stream
 * started, the error event), the upstream socket is closed rather than drained, and the upstream could write
 * no more than the limit plus socket buffers before it was, so the gateway never held the answer.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { chunk } from '../fakes/openai.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const FRAME_LIMIT = 64 * 1024;
const BODY_LIMIT = 256 * 1024;
/** What the fake gives up at: far more than any limit, so a gateway that reads everything is caught. */
const GIVE_UP = 64 * 1024 * 1024;
/** Loopback socket buffers (send and receive, autotuned up to a few MB each) plus undici's own read-ahead. */
const SOCKET_SLACK = 16 * 1024 * 1024;

interface Answer {
  /** Bytes the fake wrote before its socket closed or it gave up. */
  written: number;
  /** Whether the gateway closed the connection before the answer was complete. */
  dropped: Promise<boolean>;
}

type Script = (res: ServerResponse, body: Record<string, unknown>, answer: Answer) => Promise<void>;

/** Writes `head`, then `piece` again and again, waiting for drain, until the socket closes or GIVE_UP is reached. */
async function flood(res: ServerResponse, answer: Answer, head: string, piece: string, contentType = 'text/event-stream'): Promise<void> {
  res.writeHead(200, { 'content-type': contentType });
  const block = Buffer.from(piece.repeat(Math.ceil(16384 / piece.length)));
  res.write(head);
  answer.written += Buffer.byteLength(head);
  while (!res.destroyed && answer.written < GIVE_UP) {
    const more = res.write(block);
    answer.written += block.length;
    if (!more) await Promise.race([once(res, 'drain'), once(res, 'close')]);
  }
  if (!res.destroyed) res.end();
}

describe('upstream answers past the size limits', () => {
  let gw: TestGateway;
  let auth: Record<string, string>;
  let upstream: { url: string; close(): Promise<void> };
  let script: Script = async () => {};
  const answers: Answer[] = [];

  before(async () => {
    const server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (p: Buffer) => parts.push(p));
      req.on('end', () => {
        const answer: Answer = { written: 0, dropped: new Promise((resolve) => res.on('close', () => resolve(!res.writableFinished))) };
        answers.push(answer);
        void script(res, JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>, answer).catch(() => res.destroy());
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    upstream = {
      url,
      close: () => new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
    };
    gw = await startTestGateway(`
providers:
  openai:
    baseUrl: ${url}/v1
    apiKey: sk-upstream
models:
  - id: plain
    provider: openai
routing:
  retries: 2
  backoffMs: 1
upstream:
  maxFrameBytes: ${FRAME_LIMIT}
  maxBodyBytes: ${BODY_LIMIT}
  breaker:
    volumeThreshold: 1000
pipelines:
  - name: chat
    routes: [/v1/chat/completions, /v1/messages]
    plugins: [auth]
`);
    auth = { authorization: `Bearer ${await gw.createKey()}` };
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  const ask = (stream: boolean, path = '/v1/chat/completions') =>
    postJson(`${gw.url}${path}`, { model: 'plain', stream, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, auth);

  /** The one upstream answer of the last request: dropped by the gateway, and read no further than limit + slack. */
  async function assertDropped(limit: number, requestsBefore: number) {
    assert.equal(answers.length, requestsBefore + 1, 'an oversized answer is not asked for again (no retry)');
    const answer = answers.at(-1)!;
    assert.equal(await answer.dropped, true, 'the upstream connection was closed before the answer was complete');
    assert.ok(answer.written <= limit + SOCKET_SLACK, `the upstream wrote ${answer.written} bytes for a limit of ${limit}`);
  }

  test('a stream line that never ends, from the first byte: 502 UPSTREAM_ERROR', async () => {
    script = (res, _body, answer) => flood(res, answer, 'data: {"id":"', 'x');
    const before = answers.length;
    const r = await ask(true);
    assert.equal(r.status, 502, JSON.stringify(r.body).slice(0, 300));
    assert.equal(r.body.error.code, 'UPSTREAM_ERROR');
    assert.match(r.body.error.message, /stream frame larger than 65536 bytes \(upstream\.maxFrameBytes\)/);
    assert.equal(r.body.error.details.limitBytes, FRAME_LIMIT);
    await assertDropped(FRAME_LIMIT, before);
  });

  test('data lines that never end their event: 502 UPSTREAM_ERROR', async () => {
    script = (res, _body, answer) => flood(res, answer, '', 'data: more\n');
    const before = answers.length;
    const r = await ask(true);
    assert.equal(r.status, 502);
    assert.equal(r.body.error.code, 'UPSTREAM_ERROR');
    await assertDropped(FRAME_LIMIT, before);
  });

  test('an endless line after the stream started: the chat error event, no [DONE]', async () => {
    script = (res, body, answer) => flood(res, answer, `data: ${JSON.stringify(chunk(String(body.model), { role: 'assistant', content: 'Hi' }))}\n\ndata: `, 'y');
    const before = answers.length;
    const r = await ask(true);
    assert.equal(r.status, 200);
    const events = String(r.body).split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
    assert.equal(JSON.parse(events[0]!).choices[0].delta.content, 'Hi');
    assert.ok(!events.includes('[DONE]'));
    assert.equal(JSON.parse(events.at(-1)!).error.code, 'UPSTREAM_ERROR');
    await assertDropped(FRAME_LIMIT, before);
  });

  test('the same on /v1/messages: event: error after the text', async () => {
    script = (res, body, answer) => flood(res, answer, `data: ${JSON.stringify(chunk(String(body.model), { role: 'assistant', content: 'Hi' }))}\n\ndata: `, 'z');
    const r = await ask(true, '/v1/messages');
    assert.equal(r.status, 200);
    const text = String(r.body);
    assert.match(text, /event: error\ndata: .*"type":"server_error"/);
    assert.doesNotMatch(text, /message_stop/);
  });

  test('a non-streamed body past the limit, sent chunked: 502 UPSTREAM_ERROR', async () => {
    script = (res, _body, answer) => flood(res, answer, '{"choices":[{"message":{"content":"', 'w', 'application/json');
    const before = answers.length;
    const r = await ask(false);
    assert.equal(r.status, 502);
    assert.equal(r.body.error.code, 'UPSTREAM_ERROR');
    assert.match(r.body.error.message, /body larger than 262144 bytes \(upstream\.maxBodyBytes\)/);
    await assertDropped(BODY_LIMIT, before);
  });

  test('a non-streamed body that declares a length past the limit is refused before it is read', async () => {
    script = async (res, _body, answer) => {
      const size = BODY_LIMIT * 8;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(size) });
      const block = Buffer.alloc(16384, 0x20);
      while (!res.destroyed && answer.written < size) {
        const more = res.write(block);
        answer.written += block.length;
        if (!more) await Promise.race([once(res, 'drain'), once(res, 'close')]);
      }
    };
    const before = answers.length;
    const r = await ask(false);
    assert.equal(r.status, 502);
    assert.equal(r.body.error.details.limitBytes, BODY_LIMIT);
    await assertDropped(BODY_LIMIT, before);
  });

  test('answers within the limits still pass', async () => {
    script = async (res, body) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: 'v'.repeat(BODY_LIMIT / 2) }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
    };
    const r = await ask(false);
    assert.equal(r.status, 200);
    assert.equal(r.body.choices[0].message.content.length, BODY_LIMIT / 2);
  });
});
