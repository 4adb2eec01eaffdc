/**
 * The passthrough's HTTP transport keeps the upstream settings translated calls have: connections reused per
 * origin, the headers and body timeouts (504, a cut answer), the per-origin slots shared with translated calls
 * (503 after upstream.queueTimeoutMs, the upstream never asked), and bodies of unknown length framed for every
 * method. Whatever carries the passthrough (undici today; http-proxy-3 was measured, see docs/architecture.md)
 * must pass these.
 */
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { chatConfig, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

/** Above twice QUEUE_MS: the pool tests hold a slot through two queue timeouts. */
const HEADERS_MS = 1500;
const BODY_MS = 1500;
const QUEUE_MS = 300;

interface Arrival {
  url: string;
  method: string;
  port: number;
  body: string;
  /** The gateway closed this request's connection before the answer was complete. */
  dropped: Promise<void>;
}

let upstream: Server;
const arrivals: Arrival[] = [];
/** Answers the upstream holds back until a test lets them go. */
const held: Array<() => void> = [];
let gw: TestGateway;
let key: string;

function route(req: IncomingMessage, res: ServerResponse, body: string): void {
  const path = req.url!.split('?')[0]!;
  if (path.endsWith('/hang')) return; // connection accepted, request read, never answered
  if (path.endsWith('/stall')) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: first\n\n');
    return; // then silence
  }
  if (path.endsWith('/hold')) {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('held ');
    held.push(() => res.end('released'));
    return;
  }
  if (path.endsWith('/chat/completions')) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ method: req.method, bytes: Buffer.byteLength(body), body }));
}

before(async () => {
  upstream = createServer((req, res) => {
    let body = '';
    let dropped!: () => void;
    const arrival: Arrival = { url: req.url!, method: req.method!, port: req.socket.remotePort!, body: '', dropped: new Promise((resolve) => (dropped = resolve)) };
    arrivals.push(arrival);
    res.once('close', () => {
      if (!res.writableFinished) dropped();
    });
    req.setEncoding('utf8');
    req.on('data', (part: string) => (body += part));
    req.on('end', () => {
      arrival.body = body;
      route(req, res, body);
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  gw = await startTestGateway(chatConfig(base, `upstream:
  headersTimeoutMs: ${HEADERS_MS}
  bodyTimeoutMs: ${BODY_MS}
  connectionsPerOrigin: 1
  queueTimeoutMs: ${QUEUE_MS}
`));
  key = await gw.createKey({ scopes: { capabilities: ['proxy', 'chat'] } });
});

after(async () => {
  for (const release of held.splice(0)) release();
  await gw?.close();
  upstream?.closeAllConnections();
  await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
});

interface Answer {
  status: number;
  text: string;
  /** The connection broke before the answer ended. */
  cut: boolean;
}

function call(method: string, path: string, body?: { chunks: string[] }): Promise<Answer> {
  const { port } = new URL(gw.url);
  return new Promise((resolve, reject) => {
    // Chunked by name: node:http would send a DELETE body unframed otherwise.
    const framing: Record<string, string> = body ? { 'transfer-encoding': 'chunked' } : {};
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: { authorization: `Bearer ${key}`, ...framing } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (part: string) => (text += part));
      res.on('end', () => resolve({ status: res.statusCode!, text, cut: false }));
      res.on('error', () => resolve({ status: res.statusCode!, text, cut: true }));
    });
    req.on('error', reject);
    for (const chunk of body?.chunks ?? []) req.write(chunk);
    req.end();
  });
}

const code = (answer: Answer) => (JSON.parse(answer.text) as { error: { code: string } }).error.code;

describe('the passthrough transport', () => {
  test('connections to an origin are kept alive and reused', async () => {
    const from = arrivals.length;
    assert.equal((await call('GET', '/proxy/openai/models')).status, 200);
    assert.equal((await call('GET', '/proxy/openai/models')).status, 200);
    assert.equal(arrivals[from]!.port, arrivals[from + 1]!.port, 'the second request came on the first one\'s connection');
  });

  test('a body of unknown length is framed for every method, DELETE included', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const answer = await call(method, '/proxy/openai/files/x', { chunks: ['{"part":', '1}'] });
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(JSON.parse(answer.text), { method, bytes: 10, body: '{"part":1}' });
    }
  });

  test('an upstream that never answers: 504 UPSTREAM_TIMEOUT after upstream.headersTimeoutMs, its connection dropped', async () => {
    const from = arrivals.length;
    const started = Date.now();
    const answer = await call('GET', '/proxy/openai/hang');
    const waited = Date.now() - started;
    assert.equal(answer.status, 504, answer.text);
    assert.equal(code(answer), 'UPSTREAM_TIMEOUT');
    assert.ok(waited >= HEADERS_MS - 50 && waited < HEADERS_MS * 3, `answered after ${waited} ms`);
    await arrivals[from]!.dropped;
  });

  test('an answer that stalls past upstream.bodyTimeoutMs is cut: the caller has what came, then a broken connection', async () => {
    const from = arrivals.length;
    const answer = await call('GET', '/proxy/openai/stall');
    assert.equal(answer.status, 200);
    assert.equal(answer.text, 'data: first\n\n');
    assert.equal(answer.cut, true);
    await arrivals[from]!.dropped;
  });

  test('the origin\'s one slot is taken: 503 UPSTREAM_UNAVAILABLE after the queue timeout, for passthrough and translated calls alike', async () => {
    const holding = call('GET', '/proxy/openai/hold');
    while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const asked = arrivals.length;
    const started = Date.now();
    const refused = await call('GET', '/proxy/openai/models');
    const waited = Date.now() - started;
    assert.equal(refused.status, 503, refused.text);
    assert.equal(code(refused), 'UPSTREAM_UNAVAILABLE');
    assert.ok(waited >= QUEUE_MS - 20, `refused after ${waited} ms`);
    // Translated calls share the slot with the passthrough.
    const chat = await postJson(`${gw.url}/v1/chat/completions`, { model: 'plain', messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${key}` });
    assert.equal(chat.status, 503, JSON.stringify(chat.body));
    assert.equal(arrivals.length, asked, 'the refused requests never reached the upstream');
    held.shift()!();
    assert.equal((await holding).text, 'held released');
    // The slot is free again once the held answer ended.
    assert.equal((await call('GET', '/proxy/openai/models')).status, 200);
  });

  test('a slot that frees within the queue timeout serves the waiting caller', async () => {
    const holding = call('GET', '/proxy/openai/hold');
    while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const waiting = call('GET', '/proxy/openai/models');
    setTimeout(() => held.shift()!(), QUEUE_MS / 3);
    assert.equal((await waiting).status, 200);
    await holding;
  });
});
