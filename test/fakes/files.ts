/**
 * A loopback upstream speaking three providers' files APIs, each by its documented wire format:
 * - OpenAI (and Azure OpenAI): POST {base}/files multipart (purpose, file) -> a File; DELETE {base}/files/{id};
 *   GET {base}/files/{id}/content -> the bytes.
 * - Anthropic: POST {base}/files multipart (file) with anthropic-beta files-api-2025-04-14; DELETE {base}/files/{id};
 *   GET {base}/files/{id}/content -> the bytes of a file in `downloadable` only (as Anthropic serves those skills or
 *   code execution made, not uploads; the 400 it answers for the others is this fake's guess of the status).
 * - Gemini: POST /upload/v1beta/files (resumable start, X-Goog-Upload-URL answered), then the bytes with
 *   `upload, finalize` -> {file: {name, sizeBytes, expirationTime}}; DELETE /v1beta/files/{name}.
 * Multipart bodies are parsed as they stream (busboy) and the file's bytes are counted; a file of at most
 * `KEEP_WHOLE` bytes is kept whole, to be served back, and of a larger one only the first KiB (a streamed upload
 * of hundreds of MiB is never held). Content is written in pieces, each flushed before the next, and how much of
 * it went out is recorded. Every request is recorded, with whether its body arrived whole.
 * Chat too, for requests that name uploaded files: OpenAI's POST {base}/chat/completions and Anthropic's POST
 * {base}/messages answer a fixed text, their JSON bodies recorded.
 */
import busboy from 'busboy';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FileRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  fields: Record<string, string>;
  /** The multipart parts' names in the order they came. */
  partOrder: string[];
  file?: { name: string; filename: string; mimeType: string; bytes: number; head: string };
  /** The body arrived to its end (false: the gateway aborted it). */
  complete: boolean;
  /** A chat request's JSON body. */
  json?: any;
  /**
   * A content answer: the bytes written before it ended or the gateway closed the connection, whether all were,
   * and when the fake stopped writing.
   */
  served?: { bytes: number; complete: boolean; ended: Promise<void> };
}

export interface FakeFiles {
  origin: string;
  requests: FileRequest[];
  /** Files the fake holds: provider id -> bytes. */
  stored: Map<string, number>;
  /** The bytes of each stored file of at most KEEP_WHOLE bytes, served by its content route. */
  contents: Map<string, Buffer>;
  /** Anthropic file ids whose content is served (as for files code execution made); uploads are not downloadable. */
  downloadable: Set<string>;
  /** Content is sent without a content-length (chunked), so a reader learns the size only by reading. */
  chunkedContent: boolean;
  /** While set, a content answer stops after its first piece until the promise settles. */
  contentGate: Promise<void> | null;
  /** Resolves once the next content answer has written its first piece. */
  nextContent(): Promise<FileRequest>;
  /** Makes the next answers of this status instead of the normal ones, until cleared with null. */
  failWith(status: number | null): void;
  close(): Promise<void>;
}

const KEEP = 1024;
/**
 * Files up to this size are kept whole, to be served back; larger ones (the streaming tests' hundreds of MiB, whose
 * memory is measured in this process) are not. A test that needs larger content puts it in `contents` itself.
 */
export const KEEP_WHOLE = 4 * 1024 * 1024;
const PIECE = 64 * 1024;

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function readMultipart(req: IncomingMessage, record: FileRequest, whole: Buffer[]): Promise<void> {
  return new Promise((resolve) => {
    const parser = busboy({ headers: req.headers });
    parser.on('field', (name, value) => {
      record.fields[name] = value;
      record.partOrder.push(name);
    });
    parser.on('file', (name, stream, info) => {
      record.partOrder.push(name);
      const file = { name, filename: info.filename ?? '', mimeType: info.mimeType, bytes: 0, head: '' };
      record.file = file;
      stream.on('data', (chunk: Buffer) => {
        if (file.head.length < KEEP) file.head += chunk.subarray(0, KEEP - file.head.length).toString('latin1');
        file.bytes += chunk.length;
        if (file.bytes <= KEEP_WHOLE) whole.push(chunk);
        else whole.length = 0;
      });
    });
    parser.on('close', () => {
      record.complete = true;
      resolve();
    });
    parser.on('error', () => resolve());
    req.on('aborted', () => resolve());
    req.on('close', () => resolve());
    req.pipe(parser);
  });
}

function readRaw(req: IncomingMessage, record: FileRequest): Promise<Buffer> {
  return new Promise((resolve) => {
    const kept: Buffer[] = [];
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      if (bytes < KEEP) kept.push(chunk.subarray(0, KEEP - bytes));
      bytes += chunk.length;
    });
    req.on('end', () => {
      record.complete = true;
      record.file = { name: 'body', filename: '', mimeType: String(req.headers['content-type'] ?? ''), bytes, head: Buffer.concat(kept).toString('latin1') };
      resolve(Buffer.concat(kept));
    });
    req.on('close', () => resolve(Buffer.concat(kept)));
  });
}

/** The bytes in pieces, each written once the one before is flushed; stops when the connection goes. */
function serveContent(res: ServerResponse, bytes: Buffer, record: FileRequest, chunked: boolean, gate: Promise<void> | null, started: () => void): void {
  const served = { bytes: 0, complete: false, ended: Promise.resolve() };
  record.served = served;
  served.ended = writeContent(res, bytes, served, chunked, gate, started);
}

async function writeContent(res: ServerResponse, bytes: Buffer, served: { bytes: number; complete: boolean }, chunked: boolean, gate: Promise<void> | null, started: () => void): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/octet-stream', ...(chunked ? {} : { 'content-length': String(bytes.length) }) });
  for (let at = 0; at < bytes.length && !res.destroyed; at += PIECE) {
    const piece = bytes.subarray(at, at + PIECE);
    // A write pending when the connection goes never calls back: the close ends the wait.
    const written = await new Promise<boolean>((resolve) => {
      const closed = () => resolve(false);
      res.once('close', closed);
      res.write(piece, (err) => {
        res.off('close', closed);
        resolve(!err);
      });
    });
    if (!written) return;
    served.bytes += piece.length;
    if (at === 0) {
      started();
      await gate;
    }
  }
  if (bytes.length === 0) started();
  if (res.destroyed) return;
  served.complete = true;
  res.end();
}

export async function startFakeFiles(): Promise<FakeFiles> {
  const requests: FileRequest[] = [];
  const stored = new Map<string, number>();
  const contents = new Map<string, Buffer>();
  const downloadable = new Set<string>();
  const uploads = new Map<string, string>();
  const contentWaiters: Array<(record: FileRequest) => void> = [];
  let failing: number | null = null;
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const record: FileRequest = { method: req.method ?? '', path: url.pathname + url.search, headers: req.headers, fields: {}, partOrder: [], complete: false };
    requests.push(record);
    const origin = `http://${req.headers.host}`;
    if (req.method === 'POST' && /^\/(openai|azure|anthropic)\/files$/.test(url.pathname)) {
      const whole: Buffer[] = [];
      await readMultipart(req, record, whole);
      if (!record.complete || !record.file) return void (res.headersSent || res.destroyed || json(res, 400, { error: { message: 'no file' } }));
      if (failing) return json(res, failing, { error: { message: 'upstream refused', type: 'server_error' } });
      const anthropic = url.pathname.startsWith('/anthropic');
      const id = anthropic ? `file_${randomUUID().replace(/-/g, '')}` : `file-${randomUUID().replace(/-/g, '').slice(0, 24)}`;
      stored.set(id, record.file.bytes);
      if (record.file.bytes <= KEEP_WHOLE) contents.set(id, Buffer.concat(whole));
      if (anthropic) return json(res, 200, { id, type: 'file', filename: record.file.filename, mime_type: record.file.mimeType, size_bytes: record.file.bytes, created_at: new Date().toISOString(), downloadable: false });
      return json(res, 200, { id, object: 'file', bytes: record.file.bytes, created_at: Math.floor(Date.now() / 1000), filename: record.file.filename, purpose: record.fields.purpose, status: 'processed', expires_at: null });
    }
    const one = /^\/(openai|azure|anthropic)\/files\/([^/]+)$/.exec(url.pathname) ?? /^\/gemini\/v1beta\/(files\/[^/]+)$/.exec(url.pathname);
    if (req.method === 'DELETE' && one) {
      const id = decodeURIComponent(one[2] ?? one[1]!);
      record.complete = true;
      if (failing) return json(res, failing, { error: { message: 'upstream refused' } });
      contents.delete(id);
      if (!stored.delete(id)) return json(res, 404, { error: { message: `No such File object: ${id}`, type: 'invalid_request_error' } });
      return url.pathname.startsWith('/gemini') ? json(res, 200, {}) : json(res, 200, { id, object: 'file', deleted: true });
    }
    const content = /^\/(openai|azure|anthropic)\/files\/([^/]+)\/content$/.exec(url.pathname);
    if (req.method === 'GET' && content) {
      const id = decodeURIComponent(content[2]!);
      record.complete = true;
      if (failing) return json(res, failing, { error: { message: 'upstream refused', type: 'server_error' } });
      const anthropic = content[1] === 'anthropic';
      if (!stored.has(id)) {
        return anthropic ? json(res, 404, { type: 'error', error: { type: 'not_found_error', message: `File not found: ${id}` } })
          : json(res, 404, { error: { message: `No such File object: ${id}`, type: 'invalid_request_error', param: 'id', code: null } });
      }
      if (anthropic && !downloadable.has(id)) return json(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: `File ${id} is not downloadable` } });
      const bytes = contents.get(id);
      if (!bytes) return json(res, 500, { error: { message: `fake: the content of ${id} was larger than ${KEEP_WHOLE} bytes and was not kept` } });
      return serveContent(res, bytes, record, fake.chunkedContent, fake.contentGate, () => contentWaiters.splice(0).forEach((w) => w(record)));
    }
    if (req.method === 'POST' && (url.pathname === '/openai/chat/completions' || url.pathname === '/anthropic/messages')) {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      record.complete = true;
      record.json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (url.pathname.startsWith('/anthropic')) {
        return json(res, 200, { id: 'msg_fake', type: 'message', role: 'assistant', model: record.json.model, content: [{ type: 'text', text: 'read it' }], stop_reason: 'end_turn', usage: { input_tokens: 9, output_tokens: 2 } });
      }
      return json(res, 200, {
        id: 'chatcmpl-fake', object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: record.json.model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'read it' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
      });
    }
    if (req.method === 'POST' && url.pathname === '/upload/gemini/v1beta/files') {
      if (req.headers['x-goog-upload-command'] === 'start') {
        const meta = await readRaw(req, record);
        record.fields = { ...(JSON.parse(meta.toString('utf8') || '{}') as { file?: Record<string, string> }).file };
        const uploadId = randomUUID();
        uploads.set(uploadId, String(req.headers['x-goog-upload-header-content-type'] ?? ''));
        res.writeHead(200, { 'x-goog-upload-url': `${origin}/upload/gemini/v1beta/files?upload_id=${uploadId}&upload_protocol=resumable`, 'x-goog-upload-status': 'active' });
        return void res.end();
      }
      const uploadId = url.searchParams.get('upload_id') ?? '';
      await readRaw(req, record);
      if (!record.complete) return;
      if (!uploads.has(uploadId) || req.headers['x-goog-upload-command'] !== 'upload, finalize' || req.headers['x-goog-upload-offset'] !== '0') {
        return json(res, 400, { error: { code: 400, message: 'bad upload request', status: 'INVALID_ARGUMENT' } });
      }
      const name = `files/${randomUUID().slice(0, 12)}`;
      stored.set(name, record.file!.bytes);
      const expirationTime = new Date(Date.now() + 48 * 3600_000).toISOString();
      return json(res, 200, { file: { name, mimeType: uploads.get(uploadId), sizeBytes: String(record.file!.bytes), expirationTime, state: 'ACTIVE', uri: `${origin}/gemini/v1beta/${name}` } });
    }
    json(res, 404, { error: { message: `fake: no route ${req.method} ${url.pathname}` } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const fake: FakeFiles = {
    origin,
    requests,
    stored,
    contents,
    downloadable,
    chunkedContent: false,
    contentGate: null,
    nextContent: () => new Promise((resolve) => contentWaiters.push(resolve)),
    failWith(status) {
      failing = status;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  return fake;
}

/** A gateway config with the four file providers on this fake, one without a files API, and the auth plugin. */
export function filesConfig(origin: string): string {
  return `
providers:
  openai: { baseUrl: ${origin}/openai, apiKey: sk-upstream-openai }
  azure-openai: { baseUrl: ${origin}/azure, apiKey: azure-key }
  anthropic: { baseUrl: ${origin}/anthropic, apiKey: sk-ant-upstream }
  gemini: { baseUrl: ${origin}/gemini/v1beta, apiKey: goog-key }
  cohere: { baseUrl: ${origin}/cohere, apiKey: co-key }
models:
  - id: gpt-4o-mini
    provider: openai
pipelines:
  - name: files
    routes: [/v1/files, /v1/chat/completions]
    plugins: [auth]
`;
}
