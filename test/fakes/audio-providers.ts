/**
 * One loopback upstream speaking the speech-to-text wire formats of Deepgram, AssemblyAI and ElevenLabs, each
 * under its own prefix (/deepgram/v1, /assemblyai/v2, /elevenlabs/v1), as their documentation describes them:
 * - Deepgram: POST /listen, the raw audio as the body, options in the query; `{metadata, results: {channels,
 *   utterances}}` (utterances only when `utterances=true`); errors `{err_code, err_msg, request_id}`.
 * - AssemblyAI: POST /upload (raw bytes) -> `{upload_url}`; POST /transcript -> `{id, status: queued}`; GET
 *   /transcript/{id} answers processing once, then completed (or error when `assemblyFails` is set); words and
 *   utterances in milliseconds; errors `{error}`.
 * - ElevenLabs: POST /speech-to-text multipart (`file`, `model_id`, ...); `{language_code, text, words}` with
 *   spacing entries between words; errors `{detail: {status, message}}`.
 * Every request is recorded: path and query, headers, the body's size and type, the form fields or JSON body.
 */
import busboy from 'busboy';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProviderAudioRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  /** Bytes of a raw body, or of the multipart form's file. */
  bytes: number;
  fields: Record<string, string>;
  json?: Record<string, unknown>;
}

export interface FakeAudioProviders {
  origin: string;
  requests: ProviderAudioRequest[];
  /** The statuses AssemblyAI's transcript endpoints answered, in order. */
  assemblyStatuses: string[];
  /** When set, AssemblyAI's transcripts end in status error with this message instead of completed. */
  assemblyFails?: string;
  close(): Promise<void>;
}

const TEXT = 'Hello there. How are you?';
const KEYS = { deepgram: 'dg-key', assemblyai: 'aai-key', elevenlabs: 'el-key' };

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readRaw(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function readForm(req: IncomingMessage, record: ProviderAudioRequest): Promise<void> {
  return new Promise((resolve, reject) => {
    const parser = busboy({ headers: req.headers });
    parser.on('field', (name, value) => { record.fields[name] = value; });
    parser.on('file', (_field, stream) => stream.on('data', (chunk: Buffer) => { record.bytes += chunk.length; }));
    parser.on('close', resolve);
    parser.on('error', reject);
    req.pipe(parser);
  });
}

/** Words of TEXT over 2 seconds: Hello 0-0.4, there. 0.5-0.9, How 1.1-1.3, are 1.3-1.5, you? 1.5-2.0. */
const WORDS = [['Hello', 0, 0.4], ['there.', 0.5, 0.9], ['How', 1.1, 1.3], ['are', 1.3, 1.5], ['you?', 1.5, 2.0]] as const;

function deepgram(record: ProviderAudioRequest, res: ServerResponse): void {
  if (record.headers.authorization !== `Token ${KEYS.deepgram}`) return json(res, 401, { err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.', request_id: randomUUID() });
  if (record.bytes === 0) return json(res, 400, { err_code: 'Bad Request', err_msg: 'Bad Request: failed to process audio: corrupt or unsupported data', request_id: randomUUID() });
  const words = WORDS.map(([w, start, end]) => ({ word: w.replace(/[.?]/, '').toLowerCase(), start, end, confidence: 0.99, punctuated_word: w }));
  const results: Record<string, unknown> = {
    channels: [{ alternatives: [{ transcript: TEXT, confidence: 0.99, words }], ...(record.query.detect_language === 'true' ? { detected_language: 'en', language_confidence: 0.98 } : {}) }],
  };
  if (record.query.utterances === 'true') {
    results.utterances = [
      { start: 0, end: 0.9, confidence: 0.99, channel: 0, transcript: 'Hello there.', words: words.slice(0, 2), speaker: 0, id: randomUUID() },
      { start: 1.1, end: 2.0, confidence: 0.99, channel: 0, transcript: 'How are you?', words: words.slice(2), speaker: 0, id: randomUUID() },
    ];
  }
  json(res, 200, { metadata: { request_id: randomUUID(), created: new Date().toISOString(), duration: 2.25, channels: 1, models: [randomUUID()] }, results });
}

function elevenLabs(record: ProviderAudioRequest, res: ServerResponse): void {
  if (record.headers['xi-api-key'] !== KEYS.elevenlabs) return json(res, 401, { detail: { status: 'invalid_api_key', message: 'Invalid API key' } });
  if (!record.fields.model_id) return json(res, 422, { detail: [{ loc: ['body', 'model_id'], msg: 'Field required', type: 'missing' }] });
  const words = WORDS.flatMap(([text, start, end], i) => [
    ...(i > 0 ? [{ text: ' ', start: WORDS[i - 1]![2], end: start, type: 'spacing', speaker_id: 'speaker_0', logprob: 0 }] : []),
    { text, start, end, type: 'word', speaker_id: 'speaker_0', logprob: -0.1 },
  ]);
  json(res, 200, { language_code: 'eng', language_probability: 0.99, text: TEXT, words });
}

export async function startFakeAudioProviders(): Promise<FakeAudioProviders> {
  const fake = { requests: [] as ProviderAudioRequest[], assemblyStatuses: [] as string[] } as FakeAudioProviders;
  const uploads = new Set<string>();
  const transcripts = new Map<string, { polls: number; body: Record<string, unknown> }>();

  const assembly = (record: ProviderAudioRequest, res: ServerResponse, route: string): void => {
    if (record.headers.authorization !== KEYS.assemblyai) return json(res, 401, { error: 'Authentication error, API token missing/invalid' });
    if (record.method === 'POST' && route === '/upload') {
      const url = `https://cdn.assemblyai.com/upload/${randomUUID()}`;
      uploads.add(url);
      return json(res, 200, { upload_url: url });
    }
    if (record.method === 'POST' && route === '/transcript') {
      const audio = record.json?.audio_url;
      if (typeof audio !== 'string' || !uploads.has(audio)) return json(res, 400, { error: 'audio_url is not a file uploaded to AssemblyAI' });
      const id = randomUUID();
      transcripts.set(id, { polls: 0, body: record.json! });
      fake.assemblyStatuses.push('queued');
      return json(res, 200, { id, status: 'queued', audio_url: audio, text: null, words: null });
    }
    const id = /^\/transcript\/([^/]+)$/.exec(route)?.[1];
    const job = id ? transcripts.get(id) : undefined;
    if (record.method !== 'GET' || !job) return json(res, 404, { error: 'Transcript not found' });
    job.polls += 1;
    if (job.polls === 1) {
      fake.assemblyStatuses.push('processing');
      return json(res, 200, { id, status: 'processing', text: null });
    }
    if (fake.assemblyFails) {
      fake.assemblyStatuses.push('error');
      return json(res, 200, { id, status: 'error', error: fake.assemblyFails });
    }
    fake.assemblyStatuses.push('completed');
    const words = WORDS.map(([text, start, end]) => ({ text, start: start * 1000, end: end * 1000, confidence: 0.98, speaker: null }));
    return json(res, 200, {
      id, status: 'completed', text: TEXT, audio_duration: 3, language_code: job.body.language_code ?? 'en', words,
      utterances: job.body.speaker_labels ? [{ speaker: 'A', start: 0, end: 2000, text: TEXT, confidence: 0.98, words }] : null,
    });
  };

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const record: ProviderAudioRequest = {
      method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, bytes: 0, fields: {},
    };
    fake.requests.push(record);
    const [, provider, route] = /^\/(deepgram\/v1|assemblyai\/v2|elevenlabs\/v1)(\/.*)$/.exec(url.pathname) ?? [];
    if (String(req.headers['content-type']).startsWith('multipart/form-data')) await readForm(req, record);
    else {
      const body = await readRaw(req);
      record.bytes = body.length;
      if (String(req.headers['content-type']).startsWith('application/json')) record.json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    }
    if (provider === 'deepgram/v1' && route === '/listen' && req.method === 'POST') return deepgram(record, res);
    if (provider === 'elevenlabs/v1' && route === '/speech-to-text' && req.method === 'POST') return elevenLabs(record, res);
    if (provider === 'assemblyai/v2' && route) return assembly(record, res, route);
    json(res, 404, { error: `fake: no route ${req.method} ${url.pathname}` });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
  return fake;
}

export const FAKE_AUDIO_KEYS = KEYS;
