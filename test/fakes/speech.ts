/**
 * A loopback upstream speaking OpenAI's text to speech (POST {base}/audio/speech, JSON): it answers binary audio
 * in several chunks, a short delay between them, and holds the last one until the test calls `release()`, so a
 * test can see the audio reach the caller while the fake is still sending. The Content-Type is the format's, as
 * OpenAI sends it, unless `contentType` names another. The voice `broken` cuts the connection after the second
 * chunk. Every request is recorded with its path, headers and JSON body.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

export interface SpeechCall {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

export interface FakeSpeech {
  origin: string;
  calls: SpeechCall[];
  /** The chunks every answer sends, in order (the last one after release()). */
  chunks: Buffer[];
  /** Sent instead of the format's type; unset: the format's. */
  contentType?: string;
  /** Answers that have sent their last byte. */
  finished: number;
  /** Resolves when an answer's connection closes before its last byte (the gateway left). */
  nextCut(): Promise<void>;
  /** Lets every held answer send its last chunk (and every later one not wait). */
  release(): void;
  /** Holds the last chunk of the answers that follow until release(). */
  hold(): void;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = { mp3: 'audio/mpeg', opus: 'audio/opus', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm' };

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export async function startFakeSpeech(): Promise<FakeSpeech> {
  let gate: { promise: Promise<void>; open: () => void } | null = null;
  let cutWaiters: Array<() => void> = [];
  const fake = {
    calls: [] as SpeechCall[],
    chunks: [Buffer.from('ID3-first-'), Buffer.from('second-'), Buffer.from('third-'), Buffer.from('last')],
    finished: 0,
    release() {
      gate?.open();
      gate = null;
    },
    nextCut() {
      return new Promise<void>((resolve) => cutWaiters.push(resolve));
    },
    hold() {
      let open!: () => void;
      const promise = new Promise<void>((resolve) => { open = resolve; });
      gate = { promise, open };
    },
  } as FakeSpeech;
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (req.method !== 'POST' || !url.pathname.endsWith('/audio/speech')) return json(res, 404, { error: { message: `fake: no route ${req.method} ${url.pathname}` } });
    const body = await readJson(req);
    fake.calls.push({ path: url.pathname + url.search, headers: req.headers, body });
    if (typeof body.input !== 'string' || typeof body.voice !== 'string') return json(res, 400, { error: { message: 'input and voice are required', type: 'invalid_request_error' } });
    const format = typeof body.response_format === 'string' ? body.response_format : 'mp3';
    res.writeHead(200, { 'content-type': fake.contentType ?? TYPES[format] ?? 'application/octet-stream', 'transfer-encoding': 'chunked' });
    const held = gate?.promise;
    res.once('close', () => {
      if (res.writableFinished) return;
      const waiting = cutWaiters;
      cutWaiters = [];
      for (const resolve of waiting) resolve();
    });
    const [first, ...rest] = fake.chunks;
    res.write(first);
    for (const [i, chunk] of rest.entries()) {
      await delay(5);
      if (i === rest.length - 1 && held) await held;
      res.write(chunk);
      if (body.voice === 'broken') return res.destroy();
    }
    res.end(() => { fake.finished++; });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise<void>((resolve) => { fake.release(); server.closeAllConnections(); server.close(() => resolve()); });
  return fake;
}
