/**
 * A loopback upstream that is both Vertex AI's job API and Cloud Storage's JSON API, by their documented wire
 * formats; every request but the token exchange must carry `Authorization: Bearer <token>` (else 401):
 * - POST /token: a service-account token exchange answering `token`.
 * - Jobs under {basePath}: GET /batchPredictionJobs/{n} (a BatchPredictionJob), POST .../{n}:cancel (to
 *   JOB_STATE_CANCELLING). Jobs are made by the test (`createJob`) and moved by `setState`: at
 *   JOB_STATE_SUCCEEDED one made for Cloud Storage writes its results under its gcsOutputDirectory, the final
 *   predictions files plus an incremental_predictions/ copy that a reader must skip.
 * - Storage: resumable uploads (POST /upload/storage/v1/b/{bucket}/o?uploadType=resumable, then chunks PUT to the
 *   session URI with Content-Range, answered 308 with Range until the last, DELETE cancels with 499), object
 *   listings (prefix, delimiter, pages of `listPageSize` with nextPageToken), object media and deletion.
 * Requests whose key is in `failIds` fail; a Gemini one succeeds with usage 10 in + 5 out, an embeddings one
 * counts 7 tokens.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Recorded } from './batches.ts';

const KiB256 = 256 * 1024;
export const VERTEX_BASE_PATH = '/v1/projects/p1/locations/us-central1';
export const GEMINI_MODEL = 'gemini-2.0-flash-001';

export interface StoredObject { bucket: string; name: string; data: Buffer; contentType: string }
export interface Chunk { contentRange: string; contentLength: string | undefined; bytes: number; status: number }
export interface Session { id: string; bucket: string; name: string; metadata: unknown; received: Buffer[]; receivedBytes: number; chunks: Chunk[]; cancelled: boolean; done: boolean }

export interface JobOptions { model?: string; output?: 'gcs' | 'bigquery'; kind?: 'gemini' | 'embeddings'; files?: number }
export interface FakeJob { number: string; name: string; state: string; keys: string[]; options: JobOptions; outputDirectory: string | null; written: boolean }

export interface FakeVertex {
  origin: string;
  token: string;
  requests: Recorded[];
  unauthorized: Recorded[];
  objects: Map<string, StoredObject>;
  sessions: Map<string, Session>;
  failIds: Set<string>;
  listPageSize: number;
  /** Awaited once a chunk's bytes are in, before it is answered: a test watches chunks with it, or refuses one by returning a status. */
  beforeChunkAnswer: ((session: Session, chunk: Chunk) => Promise<number | void> | number | void) | null;
  /** Routes a test adds (a model's methods): answers and returns true, or false (the body unread) for the fake's own routes. Authorized requests only. */
  route: ((req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean> | boolean) | null;
  createJob(keys: string[], options?: JobOptions): FakeJob;
  setState(number: string, state: string): void;
  close(): Promise<void>;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  void res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers }).end(JSON.stringify(body));
const googleError = (res: ServerResponse, code: number, message: string, status: string) => json(res, code, { error: { code, message, status } });
const uri = (o: { bucket: string; name: string }) => `gs://${o.bucket}/${o.name}`;
const objectResource = (o: StoredObject) => ({ kind: 'storage#object', id: `${o.bucket}/${o.name}/1`, name: o.name, bucket: o.bucket, size: String(o.data.length), contentType: o.contentType, generation: '1' });

function body(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('close', () => resolve(Buffer.concat(chunks)));
  });
}

export async function startFakeVertex(): Promise<FakeVertex> {
  const token = 'ya29.fake-vertex-token';
  const requests: Recorded[] = [];
  const unauthorized: Recorded[] = [];
  const objects = new Map<string, StoredObject>();
  const sessions = new Map<string, Session>();
  const jobs = new Map<string, FakeJob>();
  const failIds = new Set<string>();
  let sessionCount = 0;
  let jobCount = 1000;
  const fake: Pick<FakeVertex, 'listPageSize' | 'beforeChunkAnswer' | 'route'> = { listPageSize: 1000, beforeChunkAnswer: null, route: null };

  const put = (bucket: string, name: string, data: string | Buffer, contentType = 'application/jsonl') =>
    objects.set(uri({ bucket, name }), { bucket, name, data: Buffer.from(data), contentType });

  function resultLine(job: FakeJob, key: string): string {
    const failed = failIds.has(key);
    if (job.options.kind === 'embeddings') {
      return JSON.stringify(failed ? { instance: { content: key }, predictions: [], status: 'Bad Request: {"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}}' }
        : { instance: { content: key }, predictions: [{ embeddings: { statistics: { token_count: 7, truncated: false }, values: [0.1, 0.2] } }], status: '' });
    }
    const request = { contents: [{ role: 'user', parts: [{ text: key }] }] };
    return JSON.stringify(failed
      ? { status: 'Bad Request: {"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}}', processed_time: '2025-01-01T00:00:01.000+00:00', request }
      : { status: '', processed_time: '2025-01-01T00:00:01.000+00:00', request, response: {
        candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }, modelVersion: GEMINI_MODEL,
      } });
  }

  function writeResults(job: FakeJob): void {
    const directory = job.outputDirectory!.slice('gs://vertex-out/'.length);
    const lines = job.keys.map((k) => `${resultLine(job, k)}\n`);
    const files = job.options.files ?? 1;
    const per = Math.ceil(lines.length / files);
    for (let i = 0; i < files; i++) {
      const name = files === 1 ? 'predictions.jsonl' : `predictions_${String(i + 1).padStart(4, '0')}.jsonl`;
      put('vertex-out', `${directory}/${name}`, lines.slice(i * per, (i + 1) * per).join(''));
    }
    put('vertex-out', `${directory}/incremental_predictions/predictions_0001.jsonl`, lines.join(''));
    job.written = true;
  }

  function jobResource(job: FakeJob) {
    const ended = ['JOB_STATE_SUCCEEDED', 'JOB_STATE_FAILED', 'JOB_STATE_CANCELLED'].includes(job.state);
    const failed = job.keys.filter((k) => failIds.has(k)).length;
    const gcs = job.options.output !== 'bigquery';
    const started = !['JOB_STATE_PENDING', 'JOB_STATE_QUEUED'].includes(job.state);
    return {
      name: job.name, displayName: 'made outside', model: job.options.model ?? `publishers/google/models/${GEMINI_MODEL}`,
      inputConfig: { instancesFormat: 'jsonl', gcsSource: { uris: ['gs://vertex-in/input.jsonl'] } },
      outputConfig: gcs ? { predictionsFormat: 'jsonl', gcsDestination: { outputUriPrefix: 'gs://vertex-out/batch-output' } }
        : { predictionsFormat: 'bigquery', bigqueryDestination: { outputUri: 'bq://p1.results' } },
      state: job.state, createTime: '2025-01-01T00:00:00.000Z', updateTime: '2025-01-01T00:00:01.000Z',
      // completionStats appears once the job has ended; int64 fields are JSON strings. A job that wrote nothing ran nothing.
      ...(ended ? { completionStats: job.written ? { successfulCount: String(job.keys.length - failed), failedCount: String(failed), incompleteCount: '0' }
        : { successfulCount: '0', failedCount: '0', incompleteCount: String(job.keys.length) } } : {}),
      ...(started ? { outputInfo: gcs ? { gcsOutputDirectory: job.outputDirectory } : { bigqueryOutputDataset: 'bq://p1.results', bigqueryOutputTable: 'predictions_2025' } } : {}),
    };
  }

  async function chunk(req: IncomingMessage, res: ServerResponse, session: Session): Promise<void> {
    const data = await body(req);
    const range = String(req.headers['content-range'] ?? '');
    const record: Chunk = { contentRange: range, contentLength: req.headers['content-length'], bytes: data.length, status: 400 };
    session.chunks.push(record);
    const refusal = await fake.beforeChunkAnswer?.(session, record);
    const answer = (status: number, payload?: unknown, headers: Record<string, string> = {}) => {
      record.status = status;
      if (payload === undefined) return void res.writeHead(status, { 'content-length': '0', ...headers }).end();
      json(res, status, payload, headers);
    };
    if (typeof refusal === 'number') return answer(refusal, { error: { code: refusal, message: 'Backend Error', status: 'UNAVAILABLE' } });
    if (session.cancelled) return answer(499, { error: { code: 499, message: 'Client Closed Request' } });
    const m = /^bytes (?:(\d+)-(\d+)|\*)\/(\d+|\*)$/.exec(range);
    if (!m) return answer(400, { error: { code: 400, message: `bad Content-Range ${range}` } });
    const total = m[3] === '*' ? null : Number(m[3]);
    if (m[1] !== undefined) {
      const [first, last] = [Number(m[1]), Number(m[2])];
      if (first !== session.receivedBytes || last - first + 1 !== data.length) return answer(400, { error: { code: 400, message: `range ${range} does not follow ${session.receivedBytes} bytes` } });
      if (total === null && data.length % KiB256 !== 0) return answer(400, { error: { code: 400, message: 'a chunk before the last must be a multiple of 256 KiB' } });
      session.received.push(data);
      session.receivedBytes += data.length;
    } else if (data.length !== 0) return answer(400, { error: { code: 400, message: 'bytes */total carries no bytes' } });
    if (total === null || session.receivedBytes < total) {
      return answer(308, undefined, session.receivedBytes > 0 ? { range: `bytes=0-${session.receivedBytes - 1}` } : {});
    }
    const object: StoredObject = { bucket: session.bucket, name: session.name, data: Buffer.concat(session.received), contentType: String((session.metadata as { contentType?: string }).contentType) };
    objects.set(uri(object), object);
    session.done = true;
    answer(200, objectResource(object));
  }

  function list(res: ServerResponse, bucket: string, query: URLSearchParams): void {
    const prefix = query.get('prefix') ?? '';
    const delimiter = query.get('delimiter');
    const names = [...objects.values()].filter((o) => o.bucket === bucket && o.name.startsWith(prefix)).map((o) => o.name).sort();
    const entries: string[] = [];
    for (const name of names) {
      const rest = name.slice(prefix.length);
      const cut = delimiter ? rest.indexOf(delimiter) : -1;
      const entry = cut === -1 ? name : `${prefix}${rest.slice(0, cut + 1)}`;
      if (!entries.includes(entry)) entries.push(entry);
    }
    const start = Number(query.get('pageToken') ? Buffer.from(query.get('pageToken')!, 'base64url').toString() : 0);
    const page = entries.slice(start, start + fake.listPageSize);
    const items = page.filter((e) => !e.endsWith('/')).map((name) => objectResource(objects.get(uri({ bucket, name }))!));
    const prefixes = page.filter((e) => e.endsWith('/'));
    const next = start + fake.listPageSize < entries.length ? Buffer.from(String(start + fake.listPageSize)).toString('base64url') : undefined;
    json(res, 200, { kind: 'storage#objects', ...(items.length ? { items } : {}), ...(prefixes.length ? { prefixes } : {}), ...(next ? { nextPageToken: next } : {}) });
  }

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const recorded: Recorded = { method: req.method ?? '', path: url.pathname + url.search, headers: req.headers, body: '', at: Date.now() };
    requests.push(recorded);
    const path = url.pathname;
    if (req.method === 'POST' && path === '/token') {
      await body(req);
      return json(res, 200, { access_token: token, expires_in: 3600, token_type: 'Bearer' });
    }
    if (req.headers.authorization !== `Bearer ${token}`) {
      unauthorized.push(recorded);
      req.resume();
      return googleError(res, 401, 'Request had invalid authentication credentials.', 'UNAUTHENTICATED');
    }
    if (await fake.route?.(req, res, url)) return;
    let m: RegExpExecArray | null;
    if ((m = new RegExp(`^${VERTEX_BASE_PATH}/batchPredictionJobs/([^/:]+)(:cancel)?$`).exec(path))) {
      await body(req);
      const job = jobs.get(decodeURIComponent(m[1]!));
      if (!job) return googleError(res, 404, 'The BatchPredictionJob does not exist.', 'NOT_FOUND');
      if (m[2]) {
        if (req.method !== 'POST') return googleError(res, 405, 'cancel is a POST', 'INVALID_ARGUMENT');
        job.state = 'JOB_STATE_CANCELLING';
        return json(res, 200, {});
      }
      return json(res, 200, jobResource(job));
    }
    if ((m = /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/.exec(path))) {
      const bucket = decodeURIComponent(m[1]!);
      const session = url.searchParams.get('upload_id') ? sessions.get(url.searchParams.get('upload_id')!) : undefined;
      if (req.method === 'POST' && url.searchParams.get('uploadType') === 'resumable' && !session) {
        const metadata = JSON.parse((await body(req)).toString() || '{}') as unknown;
        const id = `session-${++sessionCount}`;
        sessions.set(id, { id, bucket, name: url.searchParams.get('name') ?? '', metadata, received: [], receivedBytes: 0, chunks: [], cancelled: false, done: false });
        const location = `http://${req.headers.host}${path}?uploadType=resumable&name=${encodeURIComponent(url.searchParams.get('name') ?? '')}&upload_id=${id}`;
        return json(res, 200, {}, { location });
      }
      if (!session) return googleError(res, 404, 'No such upload session', 'NOT_FOUND');
      if (req.method === 'PUT') return chunk(req, res, session);
      if (req.method === 'DELETE') {
        await body(req);
        session.cancelled = true;
        return json(res, 499, { error: { code: 499, message: 'Client Closed Request' } });
      }
    }
    if ((m = /^\/storage\/v1\/b\/([^/]+)\/o(?:\/([^/]+))?$/.exec(path))) {
      await body(req);
      const bucket = decodeURIComponent(m[1]!);
      if (m[2] === undefined) return req.method === 'GET' ? list(res, bucket, url.searchParams) : googleError(res, 405, 'no such method', 'INVALID_ARGUMENT');
      const key = uri({ bucket, name: decodeURIComponent(m[2]) });
      const object = objects.get(key);
      if (!object) return googleError(res, 404, `No such object: ${bucket}/${decodeURIComponent(m[2])}`, 'NOT_FOUND');
      if (req.method === 'DELETE') {
        objects.delete(key);
        return void res.writeHead(204).end();
      }
      if (url.searchParams.get('alt') === 'media') return void res.writeHead(200, { 'content-type': object.contentType }).end(object.data);
      return json(res, 200, objectResource(object));
    }
    req.resume();
    googleError(res, 404, `fake: no route ${req.method} ${path}`, 'NOT_FOUND');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin, token, requests, unauthorized, objects, sessions, failIds,
    get listPageSize() {
      return fake.listPageSize;
    },
    set listPageSize(size: number) {
      fake.listPageSize = size;
    },
    get beforeChunkAnswer() {
      return fake.beforeChunkAnswer;
    },
    set beforeChunkAnswer(hook) {
      fake.beforeChunkAnswer = hook;
    },
    get route() {
      return fake.route;
    },
    set route(hook) {
      fake.route = hook;
    },
    createJob(keys, options = {}) {
      const number = String(++jobCount);
      const job: FakeJob = {
        number, name: `projects/123456789/locations/us-central1/batchPredictionJobs/${number}`, state: 'JOB_STATE_PENDING', keys, options,
        outputDirectory: options.output === 'bigquery' ? null : `gs://vertex-out/batch-output/prediction-model-2025-01-01T00:00:${number}Z`, written: false,
      };
      jobs.set(number, job);
      return job;
    },
    setState(number, state) {
      const job = jobs.get(number);
      if (!job) throw new Error(`fake: no job ${number}`);
      job.state = state;
      if (state === 'JOB_STATE_SUCCEEDED' && job.outputDirectory && !job.written) writeResults(job);
      if (state === 'JOB_STATE_SUCCEEDED' && !job.outputDirectory) job.written = true;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
