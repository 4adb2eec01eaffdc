/**
 * One loopback upstream speaking the text-to-speech wire formats of Deepgram and ElevenLabs, each under its own
 * prefix (/deepgram/v1, /elevenlabs/v1), as their documentation describes them:
 * - Deepgram Aura: POST /speak?model=&encoding=&container=&sample_rate=&speed=, JSON `{text}`, `Authorization:
 *   Token <key>`; the Content-Type is the encoding's (linear16 without a container: application/octet-stream);
 *   errors `{err_code, err_msg, request_id}`.
 * - ElevenLabs: POST /text-to-speech/{voice_id}/stream?output_format=, JSON `{text, model_id, voice_settings?}`,
 *   `xi-api-key`; the voice `unknown-voice` answers 404 `{detail: {status: voice_not_found, message}}`.
 * Audio goes out in several chunks of binary bytes (not valid UTF-8), a short delay between them. Every request
 * is recorded with its path, query, headers and JSON body.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

export interface SpeechProviderRequest {
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  json: Record<string, unknown>;
}

export interface FakeSpeechProviders {
  origin: string;
  requests: SpeechProviderRequest[];
  /** The chunks every answer sends, in order. */
  chunks: Buffer[];
  close(): Promise<void>;
}

export const FAKE_SPEECH_KEYS = { deepgram: 'dg-key', elevenlabs: 'el-key' };

/** Deepgram's Content-Type per encoding (and container, for linear16). */
const DEEPGRAM_TYPES: Record<string, string> = { mp3: 'audio/mpeg', opus: 'audio/ogg', aac: 'audio/aac', flac: 'audio/flac', linear16: 'audio/wav' };
/** ElevenLabs' Content-Type per output_format family; PCM comes untyped. */
const ELEVENLABS_TYPES: Record<string, string> = { mp3: 'audio/mpeg', opus: 'audio/opus', wav: 'audio/wav', pcm: 'application/octet-stream' };

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  const text = Buffer.concat(parts).toString('utf8');
  return text === '' ? {} : JSON.parse(text) as Record<string, unknown>;
}

async function sendAudio(res: ServerResponse, contentType: string, chunks: Buffer[]): Promise<void> {
  res.writeHead(200, { 'content-type': contentType, 'transfer-encoding': 'chunked' });
  for (const [i, chunk] of chunks.entries()) {
    if (i > 0) await delay(5);
    res.write(chunk);
  }
  res.end();
}

function deepgramType(query: Record<string, string>): string {
  if (query.encoding === 'linear16' && query.container === 'none') return 'application/octet-stream';
  return DEEPGRAM_TYPES[query.encoding ?? 'linear16'] ?? 'application/octet-stream';
}

export async function startFakeSpeechProviders(): Promise<FakeSpeechProviders> {
  const fake = {
    requests: [] as SpeechProviderRequest[],
    chunks: [Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.from([0x00, 0xc3, 0x28, 0xa0, 0xa1]), Buffer.from([0xfe, 0xed, 0xfa, 0xce])],
  } as FakeSpeechProviders;
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const record: SpeechProviderRequest = { path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, json: await readJson(req) };
    fake.requests.push(record);
    if (req.method === 'POST' && url.pathname === '/deepgram/v1/speak') {
      if (req.headers.authorization !== `Token ${FAKE_SPEECH_KEYS.deepgram}`) return json(res, 401, { err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.', request_id: randomUUID() });
      if (typeof record.json.text !== 'string' || record.json.text === '') return json(res, 400, { err_code: 'INVALID_INPUT', err_msg: 'Text is required.', request_id: randomUUID() });
      if (!record.query.model) return json(res, 400, { err_code: 'INVALID_QUERY_PARAMETER', err_msg: 'No such model.', request_id: randomUUID() });
      return sendAudio(res, deepgramType(record.query), fake.chunks);
    }
    const voice = /^\/elevenlabs\/v1\/text-to-speech\/([^/]+)\/stream$/.exec(url.pathname)?.[1];
    if (req.method === 'POST' && voice !== undefined) {
      if (req.headers['xi-api-key'] !== FAKE_SPEECH_KEYS.elevenlabs) return json(res, 401, { detail: { status: 'invalid_api_key', message: 'Invalid API key' } });
      if (typeof record.json.text !== 'string') return json(res, 422, { detail: [{ loc: ['body', 'text'], msg: 'Field required', type: 'missing' }] });
      if (decodeURIComponent(voice) === 'unknown-voice') return json(res, 404, { detail: { status: 'voice_not_found', message: 'A voice with the voice_id unknown-voice was not found.' } });
      const family = (record.query.output_format ?? 'mp3_44100_128').split('_')[0]!;
      return sendAudio(res, ELEVENLABS_TYPES[family] ?? 'application/octet-stream', fake.chunks);
    }
    json(res, 404, { error: `fake: no route ${req.method} ${url.pathname}` });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
  return fake;
}
