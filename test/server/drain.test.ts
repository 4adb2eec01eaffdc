/**
 * The lingering close of a refused request (core/ingress/drain.ts): a client still writing a big body reads the
 * 413 rather than a reset, the answer says Connection: close, and a closing server cuts the sockets still draining.
 */
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { cutLingering, drainRefused } from '../../core/ingress/drain.ts';

describe('lingering close', () => {
  let server: Server;
  let port: number;

  before(async () => {
    server = createServer((req, res) => {
      // Refused after the first bytes, as a body limit does: the rest is still on its way.
      req.once('data', () => {
        req.pause();
        drainRefused({ req, set: (name: string, value: string) => res.setHeader(name, value) } as never);
        res.writeHead(413, { 'content-type': 'application/json' }).end('{"error":{"code":"PAYLOAD_TOO_LARGE"}}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** Writes `bytes` in 256 KiB chunks as fast as the socket takes them; resolves with the answer or the error. */
  const send = (bytes: number, declared = bytes) => new Promise<{ status?: number; connection?: string; body?: string; error?: string }>((resolve) => {
    const req = request({ port, host: '127.0.0.1', method: 'POST', path: '/', headers: { 'content-length': String(declared) } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, connection: String(res.headers.connection), body }));
    });
    req.on('error', (err) => resolve({ error: err.message }));
    const chunk = Buffer.alloc(256 * 1024, 0x61);
    let left = bytes;
    const pump = () => {
      while (left > 0) {
        left -= chunk.length;
        if (!req.write(left >= 0 ? chunk : chunk.subarray(0, chunk.length + left))) return void req.once('drain', pump);
      }
      if (declared === bytes) req.end();
    };
    pump();
  });

  /** fetch with a streamed body, as the official clients upload: it fails the whole call on a reset while writing. */
  const fetchStreamed = async (bytes: number) => {
    const chunk = new Uint8Array(256 * 1024).fill(0x61);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(stream) {
        if (sent >= bytes) return stream.close();
        sent += chunk.length;
        stream.enqueue(chunk);
      },
    }, { highWaterMark: 0 });
    try {
      const response = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body, duplex: 'half' } as RequestInit);
      return { status: response.status, connection: response.headers.get('connection'), body: await response.text() };
    } catch (err) {
      return { error: String((err as Error).cause ?? err) };
    }
  };

  test('fetch streaming 40 MB past the refusal reads the 413, every time', async () => {
    for (let i = 0; i < 10; i++) {
      const answer = await fetchStreamed(40 * 1024 * 1024);
      assert.equal(answer.error, undefined, `attempt ${i}: the client saw ${answer.error}`);
      assert.equal(answer.status, 413);
      assert.equal(answer.connection, 'close');
    }
  });

  test('a client writing 40 MB past the refusal reads the 413, every time', async () => {
    for (let i = 0; i < 5; i++) {
      const answer = await send(40 * 1024 * 1024);
      assert.equal(answer.error, undefined, `attempt ${i}: the client saw ${answer.error}`);
      assert.equal(answer.status, 413);
      assert.equal(answer.connection, 'close');
      assert.match(answer.body!, /PAYLOAD_TOO_LARGE/);
    }
  });

  test('a client that stops halfway through its body lingers until the server closes, which cuts it at once', async () => {
    const answer = await send(1024 * 1024, 1024 * 1024 * 1024);
    assert.equal(answer.status, 413);
    const started = Date.now();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    cutLingering(server);
    await closed;
    assert.ok(Date.now() - started < 2000, 'the lingering socket did not hold the close for its 10 s');
    server = createServer().listen(0);
  });
});
