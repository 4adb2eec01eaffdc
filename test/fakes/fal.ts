/**
 * A loopback fal: the queue API (one server) and fal's CDN (a second server, another origin), as fal documents
 * them:
 * - POST /{model_id}[/sub/path] with the input JSON -> `{request_id, response_url, status_url, cancel_url,
 *   status: IN_QUEUE, queue_position}`; the URLs live under the app (the first two segments), as fal's do.
 * - GET .../requests/{id}/status[?logs=1] walks the request IN_QUEUE (queue_position 0) -> IN_PROGRESS (log lines,
 *   the last carrying a tqdm percentage) -> COMPLETED, one step a poll; logs only with logs=1.
 * - GET .../requests/{id}: the output once COMPLETED (or `resultError` when set); before that 400 `{detail:
 *   "Request is still in progress", request_id, ...urls}`, as fal answers an early read.
 * - `statusError`: the next request to complete fails as fal reports it: COMPLETED with `error` and `error_type`
 *   in its status, and its response URL answering 500 `{detail}`.
 * - The output by model: whisper/wizper `{text, chunks, inferred_languages}`, kokoro `{audio}`, flux `{images}`
 *   (num_images of them), kling/veo `{video}`; the files are served by the CDN server without any credential.
 * - A wrong credential is 401 `{detail}`; input without its required field 422 `{detail: [{loc, msg, type}]}`.
 * Every request to either server is recorded (method, path, query, headers, JSON body).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const FAL_KEY = 'fal-key';

export interface FalRequest {
  server: 'queue' | 'cdn';
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  json?: Record<string, unknown>;
}

type Status = 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED';

interface Job {
  id: string;
  app: string;
  model: string;
  input: Record<string, unknown>;
  polls: number;
  status: Status;
  error?: string;
}

export interface FakeFal {
  /** The queue's origin: the provider's base URL. */
  origin: string;
  cdnOrigin: string;
  requests: FalRequest[];
  /** Every status the queue answered (submit, status polls, early result fetches), in order. */
  statuses: Status[];
  /** The bytes of each CDN file. */
  files: Record<string, { type: string; bytes: Buffer }>;
  /** When set, the next completed result answers this instead of the output (a failed request), then clears. */
  resultError?: { status: number; body: unknown };
  /** When set, the next request to complete fails with this error in its status, then clears. */
  statusError?: string;
  /** The bodies fal answered, last first: for unit tests of the translators against real answers. */
  answers: unknown[];
  close(): Promise<void>;
}

export const FAL_TRANSCRIPT = {
  text: ' Hello there. How are you?',
  chunks: [{ timestamp: [0, 0.9], text: ' Hello there.' }, { timestamp: [1.1, 2.0], text: ' How are you?' }],
  inferred_languages: ['en'],
};

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function record(req: IncomingMessage, server: FalRequest['server'], list: FalRequest[]): Promise<FalRequest> {
  const url = new URL(req.url ?? '/', 'http://fake');
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  const raw = Buffer.concat(parts).toString('utf8');
  const entry: FalRequest = { server, method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers };
  if (raw !== '') entry.json = JSON.parse(raw) as Record<string, unknown>;
  list.push(entry);
  return entry;
}

const listen = (server: Server) => new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));

const REQUIRED: Array<[RegExp, string]> = [[/whisper|wizper/, 'audio_url'], [/kokoro/, 'prompt'], [/flux|kling|veo/, 'prompt']];

export async function startFakeFal(): Promise<FakeFal> {
  const jobs = new Map<string, Job>();
  const fake = {
    requests: [] as FalRequest[],
    statuses: [] as Status[],
    answers: [] as unknown[],
    files: {
      'speech.wav': { type: 'audio/wav', bytes: Buffer.from('RIFF-fal-speech-WAVEfmt-data') },
      'image-0.png': { type: 'image/png', bytes: Buffer.from('\x89PNG-fal-image-0', 'latin1') },
      'image-1.png': { type: 'image/png', bytes: Buffer.from('\x89PNG-fal-image-1', 'latin1') },
      'image-2.png': { type: 'image/png', bytes: Buffer.from('\x89PNG-fal-image-2', 'latin1') },
      'image-3.png': { type: 'image/png', bytes: Buffer.from('\x89PNG-fal-image-3', 'latin1') },
      'video.mp4': { type: 'video/mp4', bytes: Buffer.from('....ftypmp42-fal-video') },
    },
  } as Omit<FakeFal, 'origin' | 'cdnOrigin' | 'close'>;
  let origin = '';
  let cdnOrigin = '';
  const answer = (res: ServerResponse, status: number, body: unknown) => {
    fake.answers.unshift(body);
    json(res, status, body);
  };

  const urls = (job: Job) => {
    const base = `${origin}/${job.app}/requests/${job.id}`;
    return { request_id: job.id, response_url: base, status_url: `${base}/status`, cancel_url: `${base}/cancel` };
  };
  const statusBody = (job: Job, logs: boolean) => {
    fake.statuses.push(job.status);
    const body: Record<string, unknown> = { status: job.status, ...urls(job) };
    if (job.status === 'IN_QUEUE') body.queue_position = 0;
    if (logs && job.status !== 'IN_QUEUE') {
      body.logs = [
        { message: 'Loading model', level: 'INFO', source: 'user', timestamp: new Date().toISOString() },
        { message: ' 40%|████      | 11/28 [00:01<00:02, 8.1it/s]', level: 'INFO', source: 'user', timestamp: new Date().toISOString() },
        { message: 'Step done', level: 'INFO', source: 'user', timestamp: new Date().toISOString() },
      ];
    }
    if (job.status === 'COMPLETED') body.metrics = { inference_time: 1.5 };
    if (job.error) Object.assign(body, { error: job.error, error_type: 'internal_server_error' });
    return body;
  };
  const step = (job: Job): Status => {
    job.polls++;
    const was = job.status;
    job.status = job.polls === 1 ? 'IN_QUEUE' : job.polls === 2 ? 'IN_PROGRESS' : 'COMPLETED';
    if (was !== 'COMPLETED' && job.status === 'COMPLETED' && fake.statusError) {
      job.error = fake.statusError;
      delete fake.statusError;
    }
    return job.status;
  };
  const output = (job: Job): Record<string, unknown> => {
    if (/whisper|wizper/.test(job.model)) return FAL_TRANSCRIPT;
    if (/kokoro/.test(job.model)) return { audio: { url: `${cdnOrigin}/files/speech.wav`, content_type: 'audio/wav', file_name: 'speech.wav', file_size: 28 } };
    if (/flux/.test(job.model)) {
      const n = typeof job.input.num_images === 'number' ? job.input.num_images : 1;
      const images = Array.from({ length: n }, (_, i) => ({ url: `${cdnOrigin}/files/image-${i}.png`, width: 1024, height: 768, content_type: 'image/png' }));
      return { images, timings: { inference: 1.2 }, seed: 42, has_nsfw_concepts: images.map(() => false), prompt: job.input.prompt };
    }
    return { video: { url: `${cdnOrigin}/files/video.mp4`, content_type: 'video/mp4', file_name: 'video.mp4', file_size: 22 }, seed: 7 };
  };

  const queue = createServer(async (req, res) => {
    const entry = await record(req, 'queue', fake.requests);
    if (req.headers.authorization !== `Key ${FAL_KEY}`) return answer(res, 401, { detail: 'Invalid API key' });
    const requests = /^\/(.+?)\/requests\/([^/]+)(\/status)?$/.exec(entry.path);
    if (requests && entry.method === 'GET') {
      const job = jobs.get(requests[2]!);
      if (!job || job.app !== requests[1]) return answer(res, 404, { detail: 'Request not found' });
      if (requests[3]) {
        step(job);
        return answer(res, 200, statusBody(job, entry.query.logs === '1'));
      }
      if (job.status !== 'COMPLETED') return answer(res, 400, { detail: 'Request is still in progress', ...urls(job) });
      if (job.error) return answer(res, 500, { detail: job.error });
      const error = fake.resultError;
      if (error) {
        delete fake.resultError;
        return answer(res, error.status, error.body);
      }
      return answer(res, 200, output(job));
    }
    if (entry.method !== 'POST' || requests) return answer(res, 405, { detail: 'Method Not Allowed' });
    const model = entry.path.slice(1);
    const required = REQUIRED.find(([pattern]) => pattern.test(model))?.[1];
    if (required && typeof entry.json?.[required] !== 'string') return answer(res, 422, { detail: [{ loc: ['body', required], msg: 'Field required', type: 'missing' }] });
    const job: Job = { id: randomUUID(), app: model.split('/').slice(0, 2).join('/'), model, input: entry.json ?? {}, polls: 0, status: 'IN_QUEUE' };
    jobs.set(job.id, job);
    fake.statuses.push('IN_QUEUE');
    answer(res, 200, { status: 'IN_QUEUE', queue_position: 1, ...urls(job) });
  });

  const cdn = createServer(async (req, res) => {
    const entry = await record(req, 'cdn', fake.requests);
    const file = fake.files[entry.path.replace(/^\/files\//, '') as keyof typeof fake.files];
    if (!file) return json(res, 404, { detail: 'Not Found' });
    res.writeHead(200, { 'content-type': file.type, 'content-length': String(file.bytes.length) });
    res.end(file.bytes);
  });

  origin = await listen(queue);
  cdnOrigin = await listen(cdn);
  const close = (server: Server) => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return Object.assign(fake, { origin, cdnOrigin, close: async () => { await Promise.all([close(queue), close(cdn)]); } }) as FakeFal;
}
