/**
 * The gateway's own text/event-stream writer (core/ingress/event-stream.ts), on a real socket: every event in order
 * and a clean end; no event read ahead of a client that stops reading; the events' producer ended (its finally
 * run) when the client leaves; a producer that fails cuts the connection and is logged.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Logger } from '../../core/logger.ts';
import { writeEventStream } from '../../core/ingress/event-stream.ts';

interface Served {
  res: ServerResponse;
  written: Promise<void>;
}

describe('writeEventStream', () => {
  let server: Server;
  let port: number;
  let produce: () => AsyncIterable<string>;
  let served: (value: Served) => void;
  const warnings: string[] = [];
  const logger = { warn: (_fields: unknown, message: string) => warnings.push(message) } as unknown as Logger;

  before(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      served({ res, written: writeEventStream(res, produce(), logger, 'req-1') });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** Starts a request whose events `events` produces; resolves with the client's response and the server's side. */
  async function open(events: () => AsyncIterable<string>): Promise<{ response: IncomingMessage; server: Served }> {
    produce = events;
    const serverSide = new Promise<Served>((resolve) => (served = resolve));
    const req = request({ port, host: '127.0.0.1', method: 'POST', path: '/', agent: false });
    req.on('error', () => {}); // a cut connection is seen on the response
    req.end();
    const [response] = (await once(req, 'response')) as [IncomingMessage];
    return { response, server: await serverSide };
  }

  test('every event in order, then the end of the response', async () => {
    const { response, server: side } = await open(async function* () {
      for (let i = 0; i < 50; i++) yield `data: ${i}\n\n`;
      yield 'data: [DONE]\n\n';
    });
    let text = '';
    for await (const piece of response) text += String(piece);
    await side.written;
    assert.equal(text, Array.from({ length: 50 }, (_, i) => `data: ${i}\n\n`).join('') + 'data: [DONE]\n\n');
    assert.equal(side.res.writableFinished, true);
  });

  test('a client that stops reading stops the reads of the events (backpressure), and gets them all once it reads again', async () => {
    let pulled = 0;
    const frame = `data: ${'x'.repeat(64 * 1024)}\n\n`;
    const { response, server: side } = await open(async function* () {
      for (let i = 0; i < 400; i++) {
        pulled++;
        yield frame;
      }
    });
    response.pause();
    // The writer waits for 'drain' once the socket's buffers are full.
    while (!side.res.writableNeedDrain) await new Promise((resolve) => setImmediate(resolve));
    const atFull = pulled;
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(pulled, atFull, 'no event is read while the client does not read');
    assert.ok(atFull < 400, `stopped after ${atFull} of 400 events`);
    let bytes = 0;
    response.on('data', (piece: Buffer) => (bytes += piece.length));
    response.resume();
    await once(response, 'end');
    await side.written;
    assert.equal(bytes, 400 * Buffer.byteLength(frame));
  });

  test('a client that leaves mid-stream ends the producer: its finally block runs and the writer resolves', async () => {
    let ended!: () => void;
    const producerEnded = new Promise<void>((resolve) => (ended = resolve));
    const { response, server: side } = await open(async function* () {
      try {
        for (let i = 0; ; i++) yield `data: ${i}\n\n`;
      } finally {
        ended();
      }
    });
    await once(response, 'data');
    response.destroy();
    await producerEnded;
    await side.written;
    assert.equal(side.res.writableFinished, false);
  });

  test('a producer that fails after the first event cuts the connection, and the failure is logged', async () => {
    warnings.length = 0;
    let fail!: () => void;
    const failing = new Promise<void>((resolve) => (fail = resolve));
    const { response, server: side } = await open(async function* () {
      yield 'data: 1\n\n';
      await failing; // once the client has the first event
      throw new Error('upstream broke');
    });
    const [first] = (await once(response, 'data')) as [Buffer];
    assert.equal(String(first), 'data: 1\n\n');
    fail();
    const cut = new Promise<string>((resolve) => {
      response.on('error', (err) => resolve(err.message));
      response.on('end', () => resolve('ended cleanly'));
      response.on('close', () => resolve(response.complete ? 'ended cleanly' : 'cut'));
    });
    response.resume();
    assert.notEqual(await cut, 'ended cleanly');
    await side.written;
    assert.deepEqual(warnings, ['event stream failed after the response started']);
  });
});
