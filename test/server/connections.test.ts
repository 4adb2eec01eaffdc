/**
 * Client connections cannot exhaust the gateway: silent and half-sent requests are timed out, a flood of idle
 * sockets past server.maxConnections gives way to new callers (so /healthz keeps answering), busy connections are
 * never evicted, and long streams outlive every one of these timeouts.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { FULL_ADMIN } from '../../core/identity/admin-audit.ts';
import { ConnectionLimiter } from '../../core/server/connections.ts';
import { chunk, sleep, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { chatConfig, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

interface RawConnection {
  socket: Socket;
  received: () => string;
  closed: Promise<number>;
}

/** A raw TCP connection that records what it receives and when it was closed (ms after opening). */
function rawConnection(url: string, send?: string): Promise<RawConnection> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const opened = performance.now();
    let text = '';
    const socket = connect(Number(port), '127.0.0.1');
    socket.setEncoding('utf8');
    socket.on('data', (data: string) => { text += data; });
    socket.on('error', () => {});
    const closed = new Promise<number>((done) => socket.once('close', () => done(performance.now() - opened)));
    socket.once('connect', () => {
      if (send) socket.write(send);
      resolve({ socket, received: () => text, closed });
    });
    socket.once('error', reject);
  });
}

function captureLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({ write(text, _enc, done) { for (const line of String(text).split('\n')) if (line.trim()) lines.push(JSON.parse(line)); done(); } });
  return { logger: pino({ level: 'info' }, sink), lines };
}

describe('client connection limits', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let key: string;
  const log = captureLogger();

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(chatConfig(fake.baseUrl, `
server:
  headersTimeoutMs: 300
  requestTimeoutMs: 600
  maxConnections: 40
`), { logger: log.logger });
    // In process: the admin API's own request would be held to this file's 600 ms request timeout, which a loaded
    // machine can miss while hashing the key.
    key = (await gw.gateway.services.apiKeys.create({ name: 'test', scopes: { capabilities: ['chat'] } }, FULL_ADMIN('test'))).key;
  });
  after(async () => {
    await gw.close();
    await fake.close();
  });

  test('a silent socket and a half-sent request line get 408 and are closed after headersTimeoutMs', async () => {
    const silent = await rawConnection(gw.url);
    const half = await rawConnection(gw.url, 'GET /healthz HT');
    const [silentMs, halfMs] = await Promise.all([silent.closed, half.closed]);
    for (const [ms, conn] of [[silentMs, silent], [halfMs, half]] as const) {
      assert.ok(ms >= 250 && ms < 2000, `closed after ${Math.round(ms)} ms`);
      assert.match(conn.received(), /^HTTP\/1\.1 408 /);
    }
  });

  test('a body that trickles in past requestTimeoutMs gets 408', async () => {
    const slow = await rawConnection(gw.url, `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"mo`);
    const ms = await slow.closed;
    assert.ok(ms >= 500 && ms < 3000, `closed after ${Math.round(ms)} ms`);
    assert.match(slow.received(), /^HTTP\/1\.1 408 /);
  });

  test('200 idle sockets past maxConnections (40) leave /healthz answering; evictions are logged and counted', async () => {
    const flood = await Promise.all(Array.from({ length: 200 }, () => rawConnection(gw.url)));
    const health = await fetch(`${gw.url}/healthz`);
    assert.equal(health.status, 200);
    // Past the cap a new connection either evicts an idle one or is refused (destroyed, which fails the fetch): the
    // answer and the eviction count below show the flood gave way. A bound on how long /healthz took (250 ms, under
    // headersTimeoutMs) measured the machine instead: a loaded 2-core machine missed it.
    const ready = await (await fetch(`${gw.url}/readyz`)).json() as { connections: { open: number; max: number; evicted: number; refused: number } };
    assert.equal(ready.connections.max, 40);
    assert.ok(ready.connections.open <= 41, `open ${ready.connections.open}`);
    assert.ok(ready.connections.evicted >= 160, `evicted ${ready.connections.evicted}`);
    assert.ok(log.lines.some((line) => String(line.msg).startsWith('server.maxConnections reached')), 'a warning was logged');
    for (const conn of flood) conn.socket.destroy();
  });

  test('a stream with pauses longer than every client timeout completes, counted in its upstream pool meanwhile', async () => {
    fake.handle(async (req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const model = String(req.body.model);
      for (const word of ['slow', ' but', ' sure']) {
        await sleep(450);
        res.write(`data: ${JSON.stringify(chunk(model, { content: word }))}\n\n`);
      }
      res.end(`data: ${JSON.stringify(chunk(model, {}, 'stop'))}\n\ndata: [DONE]\n\n`);
    });
    try {
      const response = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      });
      assert.equal(response.status, 200);
      // While it runs, /readyz counts it in the upstream's pool.
      const ready = await (await fetch(`${gw.url}/readyz`)).json() as { upstreamPools: Array<{ origin: string; inFlight: number; queued: number }> };
      assert.deepEqual(ready.upstreamPools.find((pool) => pool.origin === fake.url), { origin: fake.url, inFlight: 1, queued: 0 });
      const text = await response.text();
      assert.match(text, /slow/);
      assert.match(text, /sure/);
      assert.match(text, /data: \[DONE\]/);
    } finally {
      fake.reset();
    }
  });
});

describe('ConnectionLimiter', () => {
  test('busy connections are never evicted: past the cap with every connection busy, the new one is refused', async () => {
    const held: Array<() => void> = [];
    const server = createServer((_req, res) => { held.push(() => res.end('done')); });
    const { logger, lines } = captureLogger();
    const limiter = new ConnectionLimiter(3, logger);
    limiter.attach(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const busy = await Promise.all([1, 2, 3].map(() => rawConnection(url, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n')));
      while (held.length < 3) await sleep(5);
      const late = await rawConnection(url);
      await late.closed;
      assert.equal(late.received(), '');
      assert.deepEqual(limiter.stats(), { open: 3, max: 3, refused: 1, evicted: 0 });
      assert.ok(lines.some((line) => line.last === 'refused'));
      for (const release of held) release();
      for (const conn of busy) {
        while (!conn.received().includes('done')) await sleep(5);
        assert.match(conn.received(), /^HTTP\/1\.1 200 /);
      }
      // Now idle (kept alive): a new connection evicts the one that has waited longest.
      const next = await rawConnection(url, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      while (held.length < 4) await sleep(5);
      held[3]!();
      while (!next.received().includes('done')) await sleep(5);
      assert.equal(limiter.stats().evicted, 1);
      for (const conn of [...busy, next]) conn.socket.destroy();
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test('an upgraded connection is never evicted by a flood of idle ones', async () => {
    const server = createServer((_req, res) => res.end());
    const limiter = new ConnectionLimiter(2, captureLogger().logger);
    limiter.attach(server);
    const serverSides: Socket[] = [];
    server.on('upgrade', (_req, socket: Socket) => {
      // Upgraded sockets are the handler's own: closeAllConnections() no longer knows them.
      serverSides.push(socket);
      socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n');
      socket.on('data', (data) => socket.write(data));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const upgraded = await rawConnection(url, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
      while (!upgraded.received().includes('101')) await sleep(5);
      const flood = await Promise.all(Array.from({ length: 10 }, () => rawConnection(url)));
      // Every flood socket has reached the server once each is closed or still counted open.
      await Promise.race([Promise.all(flood.slice(0, 8).map((conn) => conn.closed)), sleep(5000)]);
      upgraded.socket.write('still here');
      while (!upgraded.received().includes('still here')) await sleep(5);
      assert.ok(limiter.stats().evicted >= 8, `evicted ${limiter.stats().evicted}`);
      for (const conn of [upgraded, ...flood]) conn.socket.destroy();
    } finally {
      for (const socket of serverSides) socket.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
