/**
 * A loopback upstream speaking OpenAI's audio API (POST {base}/audio/transcriptions and /audio/translations,
 * multipart with the audio as `file`): whisper models answer verbose_json (task, language, duration, text,
 * segments) when asked for it; the gpt-4o transcribe models answer json with token usage and no duration, as
 * OpenAI documents. Every request is recorded with its fields and the file's name, type and size; `respond` answers
 * in another host's shape (Mistral's, a json-only host's).
 */
import busboy from 'busboy';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AudioRequest {
  path: string;
  headers: IncomingMessage['headers'];
  fields: Record<string, string>;
  file?: { field: string; filename: string; mimeType: string; bytes: number };
}

export interface FakeAudio {
  origin: string;
  requests: AudioRequest[];
  /** Seconds the whisper answers report. */
  duration: number;
  /**
   * Another host's answer (its documented shape) for a well-formed request; undefined keeps OpenAI's. Set per test,
   * cleared with `undefined`.
   */
  respond?: (request: AudioRequest, task: 'transcriptions' | 'translations') => unknown;
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function readForm(req: IncomingMessage, record: AudioRequest): Promise<void> {
  return new Promise((resolve, reject) => {
    const parser = busboy({ headers: req.headers });
    parser.on('field', (name, value) => { record.fields[name] = value; });
    parser.on('file', (field, stream, info) => {
      const file = { field, filename: info.filename ?? '', mimeType: info.mimeType, bytes: 0 };
      record.file = file;
      stream.on('data', (chunk: Buffer) => { file.bytes += chunk.length; });
    });
    parser.on('close', resolve);
    parser.on('error', reject);
    req.pipe(parser);
  });
}

export async function startFakeAudio(): Promise<FakeAudio> {
  const requests: AudioRequest[] = [];
  const fake = { duration: 2.5 } as FakeAudio;
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const record: AudioRequest = { path: url.pathname + url.search, headers: req.headers, fields: {} };
    requests.push(record);
    const task = /\/audio\/(transcriptions|translations)$/.exec(url.pathname)?.[1];
    if (req.method !== 'POST' || !task) return json(res, 404, { error: { message: `fake: no route ${req.method} ${url.pathname}` } });
    await readForm(req, record);
    if (!record.file || record.file.bytes === 0) return json(res, 400, { error: { message: 'file is required', type: 'invalid_request_error' } });
    const own = fake.respond?.(record, task as 'transcriptions' | 'translations');
    if (own !== undefined) return json(res, 200, own);
    const text = task === 'translations' ? 'Hello, how are you?' : 'Bonjour, comment allez-vous ?';
    if (record.fields.response_format === 'verbose_json') {
      const half = fake.duration / 2;
      return json(res, 200, {
        task: task === 'translations' ? 'translate' : 'transcribe', language: task === 'translations' ? 'english' : 'french', duration: fake.duration, text,
        segments: [
          { id: 0, seek: 0, start: 0, end: half, text: text.split(',')[0], tokens: [1], temperature: 0, avg_logprob: -0.2, compression_ratio: 1, no_speech_prob: 0 },
          { id: 1, seek: 0, start: half, end: fake.duration, text: text.split(',')[1]!.trim(), tokens: [2], temperature: 0, avg_logprob: -0.2, compression_ratio: 1, no_speech_prob: 0 },
        ],
      });
    }
    return json(res, 200, { text, usage: { type: 'tokens', input_tokens: 42, output_tokens: 9, total_tokens: 51, input_token_details: { audio_tokens: 42, text_tokens: 0 } } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.requests = requests;
  fake.close = () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
  return fake;
}
