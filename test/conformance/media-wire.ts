/**
 * The media half of the conformance kit, its wire side: how a loopback fake speaks one provider's transcription,
 * speech or image API. A wire answers every request of its provider's flow (an upload, a job to create, polls,
 * the result) and says which requests carried the caller's input (summarize), so multi-step providers run the
 * same fixtures as one-call ones. Result files (audio, images) are served by the kit under /kit-files/ on the
 * fake's own origin; the kit checks that no provider credential is ever sent there.
 */
import assert from 'node:assert/strict';
import busboy from 'busboy';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MediaRequest {
  method: string;
  /** Path and query, as received. */
  url: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** The body parsed as JSON, or null. */
  json: any;
  /** A multipart/form-data body: its fields and its file part. */
  form: { fields: Record<string, string>; file?: { field: string; filename: string; bytes: Buffer } } | null;
}

/** A fake's answer: status 200 unless given; a body given as chunks is written chunk by chunk. */
export interface MediaAnswer {
  status?: number;
  headers?: Record<string, string>;
  body: string | Buffer | Buffer[];
}

export interface ScriptedTranscript {
  text: string;
  language: string;
  /** Seconds. */
  duration: number;
  segments: Array<{ start: number; end: number; text: string }>;
}

/** What the provider received, merged over the requests of one call (each request may carry a part). */
export interface TranscriptionSummary {
  model: string;
  audio: Buffer;
  language: string | null;
  task: 'transcription' | 'translation';
}

export interface TranscriptionWire {
  /** Answers one request of the flow; the last one with `script`. `files` is the origin of /kit-files/. */
  answer(req: MediaRequest, script: ScriptedTranscript, files: string): MediaAnswer;
  summarize(req: MediaRequest): Partial<TranscriptionSummary> | null;
  errorBody(status: number, message: string): MediaAnswer;
  assertAuth(req: MediaRequest, credential: string): void;
  /** false when the provider's answer has no duration (then the last segment's end is metered). */
  reportsDuration?: boolean;
  /** false when the provider gives no segments (srt and verbose_json then have one segment or none). */
  reportsSegments?: boolean;
}

export interface SpeechSummary {
  model: string;
  input: string;
  voice: string;
  /** The format asked for, by OpenAI's name (mp3, wav, ...), whatever the provider calls it. */
  format: string;
}

export interface SpeechWire {
  /** Answers one request of the flow; the audio as `chunks` (or a URL to /kit-files/speech). */
  answer(req: MediaRequest, chunks: Buffer[], files: string): MediaAnswer;
  summarize(req: MediaRequest): Partial<SpeechSummary> | null;
  errorBody(status: number, message: string): MediaAnswer;
  assertAuth(req: MediaRequest, credential: string): void;
  /** The Content-Type the caller gets for a format (default the gateway's own: audio/mpeg for mp3, audio/<format>). */
  contentType?(format: string): string;
  /** false when the provider has no voice field (Deepgram: the model is the voice), so none reaches it. */
  sendsVoice?: boolean;
}

export interface ImageSummary {
  model: string;
  prompt: string;
  /** Images asked of this call. */
  n: number;
}

export interface ImageWire {
  /** Answers one request of the flow; `png` is each image's bytes (as base64, or a URL to /kit-files/image.png). */
  answer(req: MediaRequest, png: Buffer, files: string): MediaAnswer;
  /** Only the request that asks for images: a poll or a file fetch is null. */
  summarize(req: MediaRequest): ImageSummary | null;
  errorBody(status: number, message: string): MediaAnswer;
  assertAuth(req: MediaRequest, credential: string): void;
}

/**
 * Asserts a JSON body names only fields the provider documents (one it would refuse, or silently ignore, is the
 * translator's mistake: a field the caller did not ask for, or one left in OpenAI's name).
 */
export function assertDocumented(json: unknown, documented: readonly string[], provider: string): void {
  const sent = json && typeof json === 'object' ? Object.keys(json) : [];
  assert.deepEqual(sent.filter((field) => !documented.includes(field)), [], `${provider} was sent fields it does not document`);
}

export type MediaMode =
  | { kind: 'transcribe'; script: ScriptedTranscript }
  | { kind: 'speak'; chunks: Buffer[] }
  | { kind: 'image'; png: Buffer }
  | { kind: 'error'; status: number };

export interface MediaFake {
  origin: string;
  requests: MediaRequest[];
  /** Requests for /kit-files/, kept apart: they are not the provider's API. */
  fileRequests: MediaRequest[];
  mode: MediaMode;
  close(): Promise<void>;
}

async function readForm(raw: IncomingMessage, body: Buffer): Promise<MediaRequest['form']> {
  if (!String(raw.headers['content-type'] ?? '').startsWith('multipart/form-data')) return null;
  return new Promise((resolve, reject) => {
    const form: NonNullable<MediaRequest['form']> = { fields: {} };
    const parser = busboy({ headers: raw.headers });
    parser.on('field', (name, value) => { form.fields[name] = value; });
    parser.on('file', (field, stream, info) => {
      const parts: Buffer[] = [];
      stream.on('data', (p: Buffer) => parts.push(p));
      stream.on('end', () => { form.file = { field, filename: info.filename ?? '', bytes: Buffer.concat(parts) }; });
    });
    parser.on('close', () => resolve(form));
    parser.on('error', reject);
    parser.end(body);
  });
}

async function send(res: ServerResponse, answer: MediaAnswer): Promise<void> {
  const json = typeof answer.body === 'string';
  res.writeHead(answer.status ?? 200, { ...(json ? { 'content-type': 'application/json' } : {}), ...(answer.headers ?? {}) });
  if (!Array.isArray(answer.body)) return void res.end(answer.body);
  // Chunk by chunk, each its own write: the gateway must pass audio on as it arrives.
  for (const chunk of answer.body) {
    res.write(chunk);
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}

/**
 * The fake: /kit-files/ serves the mode's result files, everything else is the wire's (or its errorBody when
 * the mode is an error). `wire` is chosen per request, for targets that test several modalities on one fake.
 */
export async function startMediaFake(wireFor: () => { answer(req: MediaRequest, files: string): MediaAnswer; errorBody(status: number, message: string): MediaAnswer }, files: { png: Buffer; audio: () => Buffer }): Promise<MediaFake> {
  const requests: MediaRequest[] = [];
  const fileRequests: MediaRequest[] = [];
  let origin = '';
  const fake = { mode: { kind: 'error', status: 500 } as MediaMode };
  const server = createServer((raw, res) => {
    const parts: Buffer[] = [];
    raw.on('data', (p: Buffer) => parts.push(p));
    raw.on('end', () => void (async () => {
      const body = Buffer.concat(parts);
      const url = new URL(raw.url ?? '/', 'http://fake');
      let json: unknown = null;
      try { json = body.length > 0 ? JSON.parse(body.toString('utf8')) : null; } catch { json = null; }
      const req: MediaRequest = {
        method: raw.method ?? '', url: raw.url ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: raw.headers,
        body, json, form: await readForm(raw, body),
      };
      if (url.pathname.startsWith('/kit-files/')) {
        fileRequests.push(req);
        const image = url.pathname.endsWith('.png');
        return send(res, { headers: { 'content-type': image ? 'image/png' : 'audio/mpeg' }, body: image ? files.png : files.audio() });
      }
      requests.push(req);
      const mode = fake.mode;
      const wire = wireFor();
      if (mode.kind === 'error') return send(res, { ...wire.errorBody(mode.status, `scripted ${mode.status}`), status: mode.status });
      return send(res, wire.answer(req, origin));
    })().catch(() => res.destroy()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(fake, { origin, requests, fileRequests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
}
