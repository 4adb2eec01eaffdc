/**
 * A loopback Replicate for media models, speaking its predictions wire (replicate.com/docs/reference/http):
 * POST /v1/models/{owner}/{name}/predictions {input} or POST /v1/predictions {version, input}, with
 * `Authorization: Bearer <token>`, answers 201 with the prediction {id, model, version, input, logs, output,
 * error, status, created_at, urls: {get, cancel, web}}; GET /v1/predictions/{id} (urls.get) walks it
 * starting -> processing (`processingPolls` times, its logs growing by a tqdm bar line at 25%, 50%, 75%, ...)
 * -> succeeded (or failed with `failWith`). Outputs, by the model's name:
 * - *whisper*: {transcription, segments [{id, seek, start, end, text, ...}], detected_language, translation};
 * - minimax/speech-*: the URL of an audio file in the asked audio_format;
 * - flux*: a list of num_outputs (default 1) PNG URLs, or one URL for flux-1.1-pro / flux-pro;
 * - veo* and video-01*: the URL of an MP4 file.
 * The files are served from this same server at /files/{name} (no credential asked, as replicate.delivery).
 * Errors are problem details {title, detail, status}: 401 without the token, 422 for input without its required
 * field. Every request is recorded (method, path, headers, JSON body).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const REPLICATE_MEDIA_KEY = 'r8_media_token';

export interface ReplicateMediaRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  json?: any;
}

export interface FakeReplicateMedia {
  /** The server's origin; the provider's base URL is `${origin}/v1`. */
  origin: string;
  requests: ReplicateMediaRequest[];
  /** The statuses each prediction was answered with (creation and polls), by prediction id. */
  walks: Map<string, string[]>;
  /** Polls answered `processing` before the prediction ends (default 3). */
  processingPolls: number;
  /** The model each version id belongs to (POST /v1/predictions names only the version), as Replicate knows it. */
  versions: Record<string, string>;
  /** When set, predictions end `failed` with this error instead of succeeding. */
  failWith?: string;
  /** The bytes served for a file name. */
  fileBytes(name: string): Buffer;
  close(): Promise<void>;
}

const CREATED_AT = '2025-06-15T12:00:00.000Z';
const FILE_TYPES: Record<string, string> = { mp3: 'audio/mpeg', wav: 'audio/wav', flac: 'audio/flac', pcm: 'audio/pcm', png: 'image/png', mp4: 'video/mp4' };
const REQUIRED: Array<[RegExp, string]> = [[/whisper/, 'audio'], [/speech/, 'text'], [/./, 'prompt']];

const SEGMENTS = [
  { id: 0, seek: 0, start: 0, end: 0.9, text: ' Hello there.', tokens: [50364, 2425, 456, 13], temperature: 0, avg_logprob: -0.21, compression_ratio: 0.8, no_speech_prob: 0.01 },
  { id: 1, seek: 0, start: 1.1, end: 2.0, text: ' How are you?', tokens: [1012, 366, 291, 30], temperature: 0, avg_logprob: -0.19, compression_ratio: 0.8, no_speech_prob: 0.01 },
];

interface Stored { prediction: Record<string, unknown>; polls: number; output: unknown; bar: number }

function send(res: ServerResponse, status: number, body: unknown, type = 'application/json'): void {
  res.writeHead(status, { 'content-type': type });
  res.end(JSON.stringify(body));
}

const problem = (res: ServerResponse, status: number, title: string, detail: string) => send(res, status, { title, detail, status }, 'application/problem+json');

/** The model as the request names it: owner/name from the path, or its version's model. */
function modelOf(path: string, json: any, versions: Record<string, string>): string {
  const official = /^\/v1\/(?:models|deployments)\/([^/]+)\/([^/]+)\/predictions$/.exec(path);
  return official ? `${decodeURIComponent(official[1]!)}/${decodeURIComponent(official[2]!)}` : versions[String(json?.version)] ?? String(json?.version ?? '');
}

function outputOf(model: string, input: Record<string, any>, id: string, origin: string): unknown {
  const file = (name: string) => `${origin}/files/${name}`;
  if (model.includes('whisper')) {
    const text = SEGMENTS.map((s) => s.text).join('');
    return { transcription: text, segments: SEGMENTS, detected_language: 'english', translation: input.translate ? ' Hello there, how are you?' : null, txt_file: null, srt_file: null };
  }
  if (model.includes('speech')) return file(`${id}.${input.audio_format ?? 'mp3'}`);
  if (model.includes('veo') || model.includes('video')) return file(`${id}.mp4`);
  if (/flux-(1\.1-)?pro/.test(model)) return file(`${id}-0.png`);
  return Array.from({ length: Number(input.num_outputs ?? 1) }, (_, i) => file(`${id}-${i}.png`));
}

/** A tqdm bar the way Python prints it: ` 50%|#####     | 2/4 [00:01<00:01,  2.00it/s]`. */
function barLine(percent: number): string {
  const filled = Math.round(percent / 10);
  const step = Math.round((percent * 4) / 100);
  return `${String(percent).padStart(3)}%|${'#'.repeat(filled)}${' '.repeat(10 - filled)}| ${step}/4 [00:0${step}<00:00,  2.00it/s]`;
}

export async function startFakeReplicateMedia(): Promise<FakeReplicateMedia> {
  const stored = new Map<string, Stored>();
  let created = 0;
  const fake: FakeReplicateMedia = {
    origin: '', requests: [], walks: new Map(), processingPolls: 3, versions: {},
    fileBytes: (name) => Buffer.from(`${name.endsWith('.png') ? '\x89PNG\r\n\x1a\n' : name.endsWith('.mp4') ? '\0\0\0\x18ftypmp42' : 'ID3'}-fake-file-${name}`, 'latin1'),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const answer = (res: ServerResponse, id: string, entry: Stored, status: number) => {
    fake.walks.get(id)!.push(String(entry.prediction.status));
    send(res, status, entry.prediction);
  };

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const path = req.url ?? '';
    const record: ReplicateMediaRequest = { method: req.method ?? '', path, headers: req.headers, ...(text ? { json: JSON.parse(text) } : {}) };
    fake.requests.push(record);
    const origin = `http://${req.headers.host}`;

    if (req.method === 'GET' && path.startsWith('/files/')) {
      const name = decodeURIComponent(path.slice('/files/'.length));
      res.writeHead(200, { 'content-type': FILE_TYPES[name.split('.').pop()!] ?? 'application/octet-stream' });
      res.end(fake.fileBytes(name));
      return;
    }
    if (req.headers.authorization !== `Bearer ${REPLICATE_MEDIA_KEY}`) return problem(res, 401, 'Unauthenticated', 'You did not pass a valid authentication token');

    if (req.method === 'POST' && /^\/v1\/((models|deployments)\/[^/]+\/[^/]+\/)?predictions$/.test(path)) {
      const model = modelOf(path, record.json, fake.versions);
      const input = record.json?.input ?? {};
      const required = REQUIRED.find(([pattern]) => pattern.test(model))![1];
      if (input[required] === undefined) return problem(res, 422, 'Input validation failed', `- input: ${required} is required`);
      const id = `rm${String(++created).padStart(4, '0')}media`;
      const prediction = {
        id, model, version: record.json?.version ?? 'hidden', input, logs: '', output: null, data_removed: false, error: null,
        status: 'starting', created_at: CREATED_AT,
        urls: { get: `${origin}/v1/predictions/${id}`, cancel: `${origin}/v1/predictions/${id}/cancel`, web: `https://replicate.com/p/${id}` },
      };
      const entry: Stored = { prediction, polls: 0, output: outputOf(model, input, id, origin), bar: 0 };
      stored.set(id, entry);
      fake.walks.set(id, []);
      return answer(res, id, entry, 201);
    }
    const poll = req.method === 'GET' ? /^\/v1\/predictions\/([^/]+)$/.exec(path) : null;
    const entry = poll ? stored.get(poll[1]!) : undefined;
    if (!poll || !entry) return problem(res, 404, 'Not found', 'The requested resource could not be found.');
    entry.polls++;
    const p = entry.prediction;
    if (entry.polls <= fake.processingPolls) {
      const percent = Math.round((100 * entry.polls) / (fake.processingPolls + 1));
      Object.assign(p, { status: 'processing', started_at: CREATED_AT, logs: `${p.logs || 'Using seed: 42\n'}${barLine(percent)}\n` });
    } else if (p.status === 'processing' || p.status === 'starting') {
      if (fake.failWith) Object.assign(p, { status: 'failed', error: fake.failWith, completed_at: CREATED_AT });
      else Object.assign(p, { status: 'succeeded', output: entry.output, logs: `${p.logs}${barLine(100)}\n`, completed_at: CREATED_AT, metrics: { predict_time: 1.5 } });
    }
    answer(res, poll[1]!, entry, 200);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
