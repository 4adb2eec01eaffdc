/**
 * POST /v1/files under pressure: a 600 MiB multipart upload generated on the fly is refused with 413 once the
 * file passes 512 MiB, while the gateway's memory stays flat and the upstream request is aborted; a client that
 * leaves mid-upload, a second file part and a declared oversized body leave no registry entry.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { filesConfig, startFakeFiles, type FakeFiles } from '../fakes/files.ts';
import { eventually } from '../helpers/eventually.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const MiB = 1024 * 1024;
const BOUNDARY = 'test-boundary-7f3a';

function head(fields: Record<string, string>, filename = 'big.bin'): Buffer {
  const parts = Object.entries(fields).map(([name, value]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  return Buffer.from(`${parts.join('')}--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
}

interface Sent {
  status: number | null;
  body: string;
  /** Bytes the client managed to write before the answer or the end. */
  written: number;
}

/**
 * Sends a multipart body of `fileBytes` generated on the fly: each 1 MiB chunk is made when fetch pulls it, so
 * the client holds one chunk at a time. `stopAfter`: aborts the request after that many file bytes.
 */
async function sendGenerated(url: string, key: string, fields: Record<string, string>, fileBytes: number, options: { stopAfter?: number; tail?: Buffer; contentLength?: number } = {}): Promise<Sent> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
  if (options.contentLength !== undefined) headers['content-length'] = String(options.contentLength);
  const chunk = new Uint8Array(MiB).fill(0x61);
  const controller = new AbortController();
  const result: Sent = { status: null, body: '', written: 0 };
  let sent = 0;
  let started = false;
  const body = new ReadableStream<Uint8Array>({
    pull(stream) {
      if (!started) {
        started = true;
        stream.enqueue(head(fields));
        return;
      }
      if (options.stopAfter !== undefined && sent >= options.stopAfter) {
        controller.abort();
        return;
      }
      if (sent >= fileBytes) {
        stream.enqueue(Buffer.concat([Buffer.from('\r\n'), options.tail ?? Buffer.alloc(0), Buffer.from(`--${BOUNDARY}--\r\n`)]));
        stream.close();
        return;
      }
      const piece = chunk.subarray(0, Math.min(MiB, fileBytes - sent));
      sent += piece.length;
      result.written = sent;
      stream.enqueue(piece);
    },
  }, { highWaterMark: 0 });
  try {
    const response = await fetch(`${url}/v1/files`, { method: 'POST', headers, body, duplex: 'half', signal: controller.signal } as RequestInit);
    result.status = response.status;
    result.body = await response.text();
  } catch (err) {
    if (!controller.signal.aborted) throw err;
  }
  return result;
}

describe('/v1/files limits', () => {
  let fake: FakeFiles;
  let gw: TestGateway;
  let key: string;
  const entries = async () => (await gw.gateway.services.db.query<{ n: string }>('SELECT count(*)::text AS n FROM files'))[0]!.n;

  before(async () => {
    fake = await startFakeFiles();
    gw = await startTestGateway(filesConfig(fake.origin));
    key = await gw.createKey({ scopes: { capabilities: ['files'] } });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('600 MiB streamed: 413 once the file passes 512 MiB, the upstream aborted, RSS flat, no entry', { timeout: 180_000 }, async () => {
    // A warm-up upload through the same path first: pools, parsers and the young generation reach their working
    // size, so what is measured after is what the stream itself holds.
    const warm = await sendGenerated(gw.url, key, { provider: 'openai', purpose: 'batch' }, 64 * MiB);
    assert.equal(warm.status, 200, warm.body);
    await gw.gateway.services.db.query('DELETE FROM files');
    fake.stored.clear();
    const before = process.memoryUsage().rss;
    let peak = before;
    const samples: number[] = [];
    const sampler = setInterval(() => {
      const rss = process.memoryUsage().rss;
      samples.push(Math.round(rss / MiB));
      peak = Math.max(peak, rss);
    }, 250);
    let sent: Sent;
    try {
      sent = await sendGenerated(gw.url, key, { provider: 'openai', purpose: 'batch' }, 600 * MiB);
    } finally {
      clearInterval(sampler);
    }
    assert.equal(sent.status, 413, sent.body);
    assert.equal(JSON.parse(sent.body).error.code, 'PAYLOAD_TOO_LARGE');
    assert.ok(sent.written >= 512 * MiB, `the refusal came after the limit was read (${sent.written} bytes written)`);
    const grew = (peak - before) / MiB;
    assert.ok(grew < 64, `RSS grew by ${grew.toFixed(1)} MiB while 512 MiB streamed through`);
    const upstream = fake.requests.at(-1)!;
    assert.equal(upstream.path, '/openai/files');
    await eventually(async () => assert.equal(upstream.complete, false, 'the upstream request was aborted, not completed'));
    assert.ok(upstream.file!.bytes > 256 * MiB && upstream.file!.bytes <= 512 * MiB, `the provider saw ${upstream.file!.bytes} bytes as they came`);
    assert.equal(fake.stored.size, 0);
    assert.equal(await entries(), '0');
  });

  test('a declared Content-Length over the limit: 413 before anything goes upstream', async () => {
    const count = fake.requests.length;
    const sent = await sendGenerated(gw.url, key, { provider: 'openai', purpose: 'batch' }, 4 * MiB, { contentLength: 600 * MiB });
    assert.equal(sent.status, 413);
    assert.equal(fake.requests.length, count);
  });

  test('a client that leaves mid-upload: the upstream request is aborted and no entry is made', async () => {
    const sent = await sendGenerated(gw.url, key, { provider: 'openai', purpose: 'batch' }, 64 * MiB, { stopAfter: 8 * MiB });
    assert.equal(sent.status, null);
    const upstream = fake.requests.at(-1)!;
    await eventually(async () => assert.equal(upstream.complete, false));
    await eventually(async () => assert.equal(fake.requests.at(-1), upstream));
    assert.equal(fake.stored.size, 0);
    assert.equal(await entries(), '0');
  });

  test('a second file part: 400, and the provider file the first one made is deleted', async () => {
    const second = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="two.bin"\r\nContent-Type: text/plain\r\n\r\nsecond\r\n`);
    const sent = await sendGenerated(gw.url, key, { provider: 'openai', purpose: 'batch' }, 1024, { tail: second });
    assert.equal(sent.status, 400, sent.body);
    assert.match(JSON.parse(sent.body).error.details[0].message, /one file per upload/);
    await eventually(async () => assert.equal(fake.stored.size, 0));
    assert.equal(await entries(), '0');
  });
});
