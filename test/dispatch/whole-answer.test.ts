/**
 * UpstreamClient.sendWhole: a whole answer collected as it arrives, against a loopback upstream that writes in
 * small pieces. A success past maxBytes, declared or sent, fails with UpstreamTooLargeError and the connection is
 * dropped; an error answer keeps its first 64 KiB; a request cancelled through its RequestAbort (no AbortSignal
 * made) ends the upstream call, and one cancelled already never reaches the upstream; the origin's slot is free
 * after each.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { UpstreamClient } from '../../core/dispatch/upstream.ts';
import { isAbort, UpstreamTooLargeError } from '../../core/dispatch/upstream-errors.ts';
import { RequestAbort } from '../../core/pipeline/abort.ts';

const MAX = 100_000;
const BREAKER = { errorThresholdPercentage: 50, volumeThreshold: 100, rollingCountTimeoutMs: 10_000, resetTimeoutMs: 1000 };

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Writes `total` bytes of `fill` in pieces of `piece`, yielding to the event loop between them. */
async function writeInPieces(res: ServerResponse, total: number, piece: number, fill = 'a'): Promise<void> {
  for (let sent = 0; sent < total && !res.destroyed; sent += piece) {
    res.write(fill.repeat(Math.min(piece, total - sent)));
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (!res.destroyed) res.end();
}

describe('UpstreamClient.sendWhole', () => {
  let url: string;
  let handler: Handler = (_req, res) => res.end();
  let requests = 0;
  const closed: Array<Promise<boolean>> = [];
  const server = createServer((req, res) => {
    requests++;
    // Whether the client dropped the answer before it was complete.
    closed.push(new Promise((resolve) => res.on('close', () => resolve(!res.writableFinished))));
    req.resume();
    req.on('end', () => handler(req, res));
  });
  // One connection, so that a slot or a connection still held shows as a request that never completes.
  const client = new UpstreamClient({
    connectTimeoutMs: 5000, headersTimeoutMs: 10_000, bodyTimeoutMs: 10_000, keepAliveTimeoutMs: 1000, connectionsPerOrigin: 1, queueTimeoutMs: 5000,
    maxFrameBytes: 1 << 20, maxBodyBytes: MAX, breaker: BREAKER,
  });
  const send = (abort: RequestAbort = new RequestAbort()) =>
    client.sendWhole(url, { method: 'POST', path: '/v1/x', headers: { 'content-type': 'application/json' }, body: '{}' }, abort, MAX);

  before(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(async () => {
    await client.close();
    server.closeAllConnections();
    server.close();
  });

  test('an answer written in many pieces arrives whole, with its status and headers', async () => {
    handler = (_req, res) => {
      res.writeHead(201, { 'content-type': 'application/json', 'x-extra': 'yes' });
      void writeInPieces(res, 50_000, 997, 'b');
    };
    const answer = await send();
    assert.equal(answer.statusCode, 201);
    assert.equal(answer.headers['x-extra'], 'yes');
    assert.equal(answer.body.length, 50_000);
    assert.equal(answer.body.toString('utf8'), 'b'.repeat(50_000));
  });

  test('an empty answer is an empty body', async () => {
    handler = (_req, res) => {
      res.writeHead(202);
      res.end();
    };
    const answer = await send();
    assert.equal(answer.statusCode, 202);
    assert.equal(answer.body.length, 0);
  });

  test('a success past maxBytes, sent chunked: UpstreamTooLargeError, the answer dropped', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      void writeInPieces(res, 10 * MAX, 4096);
    };
    await assert.rejects(send(), (err) => err instanceof UpstreamTooLargeError);
    assert.equal(await closed.at(-1), true);
  });

  test('a success that declares a length past maxBytes is refused before its body is read', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-length': String(MAX + 1) });
      res.write('{');
    };
    await assert.rejects(send(), (err) => err instanceof UpstreamTooLargeError);
    assert.equal(await closed.at(-1), true);
  });

  test('an error answer keeps its first 64 KiB; the rest is not read', async () => {
    handler = (_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      void writeInPieces(res, 8 * MAX, 4096, 'e');
    };
    const answer = await send();
    assert.equal(answer.statusCode, 500);
    assert.equal(answer.body.length, 64 * 1024);
    assert.equal(await closed.at(-1), true);
  });

  test('cancelled while the upstream answers: rejects with the abort, the upstream call ends', async () => {
    const abort = new RequestAbort();
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"partial":');
      abort.abort();
    };
    await assert.rejects(send(abort), (err) => isAbort(err) && err === abort.reason);
    assert.equal(await closed.at(-1), true);
  });

  test('cancelled before it is sent: rejects at once, the upstream never hears of it', async () => {
    const abort = new RequestAbort();
    abort.abort();
    const before = requests;
    await assert.rejects(send(abort), (err) => isAbort(err));
    assert.equal(requests, before);
  });

  test('after all of that, the one connection and its slot serve the next answer', async () => {
    handler = (_req, res) => res.end('{"ok":true}');
    const answer = await send();
    assert.deepEqual(JSON.parse(answer.body.toString('utf8')), { ok: true });
  });
});
