/**
 * The per-origin pool (upstream.connectionsPerOrigin) and its queue timeout (upstream.queueTimeoutMs): with two
 * connections and two streams held open, a third caller waits, is served if a slot frees in time and gets
 * 503 UPSTREAM_UNAVAILABLE if none does, without reaching the upstream, without counting against the breaker,
 * without queueing again for another target on the same origin, and with one rate-limited warn line.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, afterEach, before, describe, test } from 'node:test';
import { pino } from 'pino';
import type { UpstreamConfig } from '../../core/config/types.ts';
import { OriginSlots } from '../../core/dispatch/origin-slots.ts';
import { readBody, readErrorBody, UpstreamClient } from '../../core/dispatch/upstream.ts';
import { UpstreamPoolFullError } from '../../core/dispatch/upstream-errors.ts';
import { silentLogger } from '../../core/logger.ts';
import { chunk, completion, helloStreamEvents, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { eventually } from '../helpers/eventually.ts';
import { chatConfig, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

/** Long against scheduling delays on a loaded machine: one queue wait must stay clear of two. */
const QUEUE_MS = 600;

/** A pino logger whose lines land in an array. */
function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(line: Buffer, _encoding, done) {
      lines.push(JSON.parse(line.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'warn' }, sink), lines };
}

describe('OriginSlots', () => {
  const signal = () => new AbortController().signal;

  test('a freed slot goes to the longest waiter; a waiter that leaves is skipped', async () => {
    const slots = new OriginSlots(1, 10_000, silentLogger());
    const first = await slots.acquire('o', signal());
    const order: string[] = [];
    const leaving = new AbortController();
    const second = slots.acquire('o', leaving.signal);
    const third = slots.acquire('o', signal()).then((release) => {
      order.push('third');
      return release;
    });
    leaving.abort(new Error('client left'));
    await assert.rejects(second, /client left/);
    assert.deepEqual(slots.state(), [{ origin: 'o', inFlight: 1, queued: 1 }]);
    first();
    first(); // a second release changes nothing
    (await third)();
    assert.deepEqual(order, ['third']);
    assert.deepEqual(slots.state(), [], 'an idle origin keeps no entry');
  });

  test('past the queue timeout: UpstreamPoolFullError, and one warn line per interval with origin and queue length', async () => {
    const { logger, lines } = capturingLogger();
    let now = 0;
    const slots = new OriginSlots(1, 20, logger, () => now);
    const held = await slots.acquire('http://up', signal());
    const refusals = await Promise.allSettled([slots.acquire('http://up', signal()), slots.acquire('http://up', signal())]);
    for (const refusal of refusals) assert.ok(refusal.status === 'rejected' && refusal.reason instanceof UpstreamPoolFullError);
    assert.equal(lines.length, 1, 'the second refusal within the interval is not logged');
    assert.equal(lines[0]!.origin, 'http://up');
    assert.equal(lines[0]!.queued, 1, 'the other waiter was still queued');
    assert.equal(lines[0]!.connectionsPerOrigin, 1);
    now += 10_000;
    await assert.rejects(slots.acquire('http://up', signal()), UpstreamPoolFullError);
    assert.equal(lines.length, 2);
    assert.equal(lines[1]!.refused, 2, 'the line counts the refusals it stands for');
    held();
  });

  test('a free slot is taken within the call; a full origin or an aborted call leaves it to acquire', async () => {
    const slots = new OriginSlots(2, 10_000, silentLogger());
    const first = slots.tryAcquire('o', signal());
    const second = slots.tryAcquire('o', signal());
    assert.equal(typeof first, 'function');
    assert.equal(typeof second, 'function');
    assert.equal(slots.tryAcquire('o', signal()), undefined, 'the origin is full');
    const waiting = slots.acquire('o', signal());
    first!();
    const third = await waiting;
    assert.equal(slots.tryAcquire('o', signal()), undefined, 'the freed slot went to the waiter');
    const left = new AbortController();
    left.abort(new Error('client left'));
    second!();
    assert.equal(slots.tryAcquire('o', left.signal), undefined, 'an aborted call takes nothing');
    assert.deepEqual(slots.state(), [{ origin: 'o', inFlight: 1, queued: 0 }]);
    third();
    assert.deepEqual(slots.state(), [], 'an idle origin keeps no entry');
  });

  test('a queue timeout of 0 refuses at once', async () => {
    const slots = new OriginSlots(1, 0, silentLogger());
    const held = await slots.acquire('o', signal());
    await assert.rejects(slots.acquire('o', signal()), UpstreamPoolFullError);
    held();
  });
});

describe('UpstreamClient releases its slot however an answer ends', () => {
  let fake: FakeOpenAI;
  let client: UpstreamClient;
  before(async () => {
    fake = await startFakeOpenAI();
    const config: UpstreamConfig = {
      connectTimeoutMs: 1000, headersTimeoutMs: 5000, bodyTimeoutMs: 5000, keepAliveTimeoutMs: 1000,
      connectionsPerOrigin: 1, queueTimeoutMs: 2000, maxFrameBytes: 65536, maxBodyBytes: 65536,
      breaker: { errorThresholdPercentage: 50, volumeThreshold: 5, rollingCountTimeoutMs: 10000, resetTimeoutMs: 30000 },
    };
    client = new UpstreamClient(config);
  });
  after(async () => {
    await client.close();
    await fake.close();
  });

  const post = (stream = false) => client.send(fake.baseUrl, { method: 'POST', path: '/chat/completions', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', stream }) }, new AbortController().signal);

  test('read whole, read as an error, destroyed mid-stream, refused: the one slot is free every time', async () => {
    await readBody(await post(), 65536);
    assert.deepEqual(client.pools(), []);
    fake.handle((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"boom"}}');
    });
    await readErrorBody(await post());
    assert.deepEqual(client.pools(), []);
    fake.reset();
    const streaming = await post(true);
    const closed = new Promise((resolve) => streaming.body.once('close', resolve));
    streaming.body.on('error', () => {}); // undici reports a body destroyed before its end as aborted
    streaming.body.destroy();
    await closed;
    assert.deepEqual(client.pools(), []);
    await assert.rejects(client.send('http://127.0.0.1:1', { method: 'GET', path: '/', headers: {} }, new AbortController().signal));
    assert.deepEqual(client.pools(), []);
  });
});

describe('a stream read to its [DONE]', () => {
  test('keeps its upstream connection for the next request, and ends for the caller before the upstream body does', async () => {
    const fake = await startFakeOpenAI();
    const ports: number[] = [];
    const endBodies: Array<() => void> = [];
    fake.handle(async (req, res, raw) => {
      ports.push(raw.socket.remotePort!);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const event of helloStreamEvents(req.body)) res.write(event);
      // The terminator is out; the body itself ends only once the caller has read its whole answer.
      await new Promise<void>((resolve) => endBodies.push(resolve));
      res.end();
    });
    const gw = await startTestGateway(chatConfig(fake.baseUrl));
    try {
      const headers = { authorization: `Bearer ${await gw.createKey()}`, 'content-type': 'application/json' };
      for (let i = 0; i < 2; i++) {
        const response = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model: 'plain', stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
        assert.match(await response.text(), /data: \[DONE\]\n\n$/);
        endBodies.shift()!();
        // The origin's slot is freed when the body closes, by then its connection is back in undici's pool.
        await eventually(async () => assert.deepEqual(((await (await fetch(`${gw.url}/readyz`)).json()) as { upstreamPools: unknown[] }).upstreamPools, []));
      }
      assert.deepEqual(fake.requests.map((r) => r.aborted), [false, false], 'no answer cut by the gateway');
      assert.equal(ports.length, 2);
      assert.equal(ports[1], ports[0], 'the second stream on the first one\'s connection');
    } finally {
      await gw.close();
      await fake.close();
    }
  });

  test('an upstream that goes on past its [DONE] by more than a frame loses the connection; the caller has its answer', async () => {
    const fake = await startFakeOpenAI();
    let cut!: () => void;
    const upstreamCut = new Promise<void>((resolve) => (cut = resolve));
    fake.handle((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const event of helloStreamEvents(req.body)) res.write(event);
      res.on('close', cut);
      const junk = `: ${'x'.repeat(1000)}\n`;
      const more = () => {
        while (!res.destroyed && res.write(junk));
        if (!res.destroyed) res.once('drain', more);
      };
      more();
    });
    const gw = await startTestGateway(chatConfig(fake.baseUrl, 'upstream:\n  maxFrameBytes: 4096\n'));
    try {
      const headers = { authorization: `Bearer ${await gw.createKey()}`, 'content-type': 'application/json' };
      const response = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model: 'plain', stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
      assert.match(await response.text(), /data: \[DONE\]\n\n$/);
      await upstreamCut;
      assert.equal(fake.requests[0]!.aborted, true);
      await eventually(async () => assert.deepEqual(((await (await fetch(`${gw.url}/readyz`)).json()) as { upstreamPools: unknown[] }).upstreamPools, []));
    } finally {
      await gw.close();
      await fake.close();
    }
  });
});

describe('a full pool through the gateway', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let headers: Record<string, string>;
  const { logger, lines } = capturingLogger();
  /** Releases the streams the fake holds open. */
  let releases: Array<() => void> = [];

  before(async () => {
    fake = await startFakeOpenAI();
    fake.handle(async (req, res) => {
      const model = String(req.body.model);
      if (req.body.stream !== true) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(completion(model, 'Hello')));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk(model, { role: 'assistant', content: 'held' }))}\n\n`);
      await new Promise<void>((resolve) => releases.push(resolve));
      res.end(`data: ${JSON.stringify(chunk(model, {}, 'stop'))}\n\ndata: [DONE]\n\n`);
    });
    gw = await startTestGateway(`
providers:
  openai:
    baseUrl: ${fake.baseUrl}
    apiKey: sk-upstream
models:
  - id: plain
    provider: openai
  - id: twice
    strategy: fallback
    targets:
      - { provider: openai, upstreamModel: first }
      - { provider: openai, upstreamModel: second }
routing:
  retries: 2
  backoffMs: 1
upstream:
  connectionsPerOrigin: 2
  queueTimeoutMs: ${QUEUE_MS}
  breaker:
    volumeThreshold: 1
    errorThresholdPercentage: 1
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth]
`, { logger });
    headers = { authorization: `Bearer ${await gw.createKey()}`, 'content-type': 'application/json' };
  });
  after(async () => {
    for (const release of releases) release();
    await gw?.close();
    await fake?.close();
  });
  afterEach(async () => {
    for (const release of releases) release();
    releases = [];
  });

  /** Opens a stream and reads its first event: the request then holds one of the two connections. */
  async function holdStream(): Promise<Response> {
    const response = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model: 'plain', stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
    assert.equal(response.status, 200);
    await response.body!.getReader().read();
    return response;
  }

  const ask = (model = 'plain') => postJson(`${gw.url}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'hi' }] }, headers);

  test('no slot frees in time: 503 UPSTREAM_UNAVAILABLE after the queue timeout, the upstream never asked', async () => {
    await holdStream();
    await holdStream();
    const asked = fake.requests.length;
    const started = performance.now();
    const r = await ask();
    const waited = performance.now() - started;
    assert.equal(r.status, 503, JSON.stringify(r.body));
    assert.equal(r.body.error.code, 'UPSTREAM_UNAVAILABLE');
    assert.equal(r.body.error.details.pool, 'full');
    assert.match(r.body.error.message, /upstream\.connectionsPerOrigin/);
    assert.ok(waited >= QUEUE_MS - 20 && waited < QUEUE_MS * 3, `waited ${Math.round(waited)} ms: one queue timeout, not one per retry`);
    assert.equal(fake.requests.length, asked, 'the refused request never reached the upstream');
    const warn = lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('upstream pool full'));
    assert.ok(warn, 'a warn line');
    assert.equal(warn.origin, new URL(fake.baseUrl).origin);
    assert.equal(typeof warn.queued, 'number');
  });

  test('another target on the same origin is not queued for again', async () => {
    await holdStream();
    await holdStream();
    const started = performance.now();
    const r = await ask('twice');
    const waited = performance.now() - started;
    assert.equal(r.status, 503);
    // Queued for again, it would wait two full queue timeouts at least; the rest of the bound is for a loaded machine.
    assert.ok(waited < QUEUE_MS * 2, `waited ${Math.round(waited)} ms: once, for the first target only`);
  });

  test('the refusals did not count against the breaker: the next request is served', async () => {
    const ready = await fetch(`${gw.url}/readyz`).then((res) => res.json()) as { breakers: Array<{ provider: string; state: string; failures: number }> };
    const breaker = ready.breakers.find((b) => b.provider === 'openai');
    assert.equal(breaker?.state, 'closed');
    assert.equal(breaker?.failures, 0);
    const r = await ask();
    assert.equal(r.status, 200);
  });

  test('a slot that frees within the queue timeout serves the waiting caller', async () => {
    await holdStream();
    await holdStream();
    const waiting = ask();
    setTimeout(() => releases.shift()!(), QUEUE_MS / 3);
    const r = await waiting;
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.choices[0].message.content, 'Hello');
  });
});
