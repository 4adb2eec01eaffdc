/**
 * A loopback upstream speaking two batch APIs by their documented wire formats, moved from state to state by the
 * test (`set`), so a test sees every state the gateway records:
 * - OpenAI, under /openai: POST /files (multipart purpose + file), GET /files/{id}, GET /files/{id}/content,
 *   POST /batches {input_file_id, endpoint, completion_window}, GET /batches/{id}, POST /batches/{id}/cancel.
 *   At `completed` (and `cancelled`, `expired` for the requests that ran) it writes the output and error files.
 * - Anthropic, under /anthropic: POST /files (the Files API), POST /messages/batches {requests: [{custom_id,
 *   params}]}, GET /messages/batches/{id}, POST .../cancel, GET .../results (JSONL).
 * Requests whose custom_id is in `failIds` fail; every other one succeeds with usage 10 in + 5 out.
 */
import busboy from 'busboy';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PLUGIN_API_VERSION } from '../../core/public/plugin.ts';

export interface Recorded { method: string; path: string; headers: IncomingMessage['headers']; body: string; at: number }

interface Line { custom_id: string; body: Record<string, unknown> }

export interface FakeBatch {
  id: string;
  family: 'openai' | 'anthropic';
  status: string;
  lines: Line[];
  endpoint: string;
  inputFileId: string | null;
  outputFileId: string | null;
  errorFileId: string | null;
  cancelInitiated: boolean;
}

export interface FakeBatchApis {
  origin: string;
  requests: Recorded[];
  batches: Map<string, FakeBatch>;
  /** OpenAI file id -> content. */
  files: Map<string, { content: string; purpose: string; filename: string }>;
  failIds: Set<string>;
  /** The status the provider reports next: OpenAI's statuses, or Anthropic's processing_status. */
  set(id: string, status: string): void;
  statusPolls(id: string): Recorded[];
  close(): Promise<void>;
}

const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

function parseMultipart(headers: IncomingMessage['headers'], body: Buffer): Promise<{ fields: Record<string, string>; file: string; filename: string }> {
  return new Promise((resolve, reject) => {
    const out = { fields: {} as Record<string, string>, file: '', filename: '' };
    const parser = busboy({ headers });
    parser.on('field', (name, value) => { out.fields[name] = value; });
    parser.on('file', (_name, stream, info) => {
      out.filename = info.filename ?? '';
      stream.on('data', (c: Buffer) => { out.file += c.toString('utf8'); });
    });
    parser.on('close', () => resolve(out));
    parser.on('error', reject);
    parser.end(body);
  });
}

function openaiCounts(b: FakeBatch, files: FakeBatchApis['files']) {
  if (b.outputFileId === null && b.errorFileId === null) return { total: b.lines.length, completed: 0, failed: 0 };
  const lines = (id: string | null) => (id === null ? 0 : files.get(id)!.content.split('\n').filter(Boolean).length);
  return { total: b.lines.length, completed: lines(b.outputFileId), failed: lines(b.errorFileId) };
}

function openaiBatch(b: FakeBatch, files: FakeBatchApis['files']) {
  return {
    id: b.id, object: 'batch', endpoint: b.endpoint, input_file_id: b.inputFileId, completion_window: '24h', status: b.status,
    output_file_id: b.outputFileId, error_file_id: b.errorFileId, created_at: 1_700_000_000, request_counts: openaiCounts(b, files),
  };
}

function anthropicBatch(b: FakeBatch, failIds: Set<string>, origin: string) {
  const ended = b.status === 'ended';
  const failed = b.lines.filter((l) => failIds.has(l.custom_id)).length;
  const counts = !ended
    ? { processing: b.lines.length, succeeded: 0, errored: 0, canceled: 0, expired: 0 }
    : b.cancelInitiated
      ? { processing: 0, succeeded: 0, errored: 0, canceled: b.lines.length, expired: 0 }
      : { processing: 0, succeeded: b.lines.length - failed, errored: failed, canceled: 0, expired: 0 };
  return {
    id: b.id, type: 'message_batch', processing_status: b.status, request_counts: counts,
    ended_at: ended ? new Date().toISOString() : null, created_at: new Date().toISOString(), expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    cancel_initiated_at: b.cancelInitiated ? new Date().toISOString() : null, archived_at: null,
    results_url: ended ? `${origin}/anthropic/messages/batches/${b.id}/results` : null,
  };
}

export async function startFakeBatchApis(): Promise<FakeBatchApis> {
  const requests: Recorded[] = [];
  const batches = new Map<string, FakeBatch>();
  const files: FakeBatchApis['files'] = new Map();
  const failIds = new Set<string>();
  let origin = '';

  /** OpenAI writes its result files when a batch ends; cancelled and expired batches' requests did not run. */
  function writeResults(b: FakeBatch): void {
    if (b.family !== 'openai' || b.outputFileId !== null || !['completed', 'cancelled', 'expired'].includes(b.status)) return;
    const ran = b.status === 'completed' ? b.lines : [];
    const ok = ran.filter((l) => !failIds.has(l.custom_id));
    const bad = ran.filter((l) => failIds.has(l.custom_id));
    const write = (lines: string[]) => {
      const id = `file-${randomUUID().replace(/-/g, '').slice(0, 24)}`;
      files.set(id, { content: lines.map((l) => l + '\n').join(''), purpose: 'batch_output', filename: `${id}.jsonl` });
      return id;
    };
    if (ok.length > 0) {
      b.outputFileId = write(ok.map((l) => JSON.stringify({
        id: `batch_req_${randomUUID()}`, custom_id: l.custom_id,
        response: { status_code: 200, request_id: randomUUID(), body: { id: 'chatcmpl-x', object: 'chat.completion', model: `${String(l.body.model)}-2024-07-18`, choices: [], usage: USAGE } },
        error: null,
      })));
    }
    if (bad.length > 0) {
      b.errorFileId = write(bad.map((l) => JSON.stringify({
        id: `batch_req_${randomUUID()}`, custom_id: l.custom_id,
        response: { status_code: 400, request_id: randomUUID(), body: { error: { message: 'bad request', type: 'invalid_request_error' } } }, error: null,
      })));
    }
  }

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const raw = await readAll(req);
    const record: Recorded = { method: req.method ?? '', path: url.pathname, headers: req.headers, body: raw.toString('utf8'), at: Date.now() };
    requests.push(record);
    const p = url.pathname;
    let m: RegExpExecArray | null;
    if (req.method === 'POST' && (p === '/openai/files' || p === '/anthropic/files')) {
      const form = await parseMultipart(req.headers, raw);
      const anthropic = p.startsWith('/anthropic');
      const id = anthropic ? `file_${randomUUID().replace(/-/g, '')}` : `file-${randomUUID().replace(/-/g, '').slice(0, 24)}`;
      files.set(id, { content: form.file, purpose: form.fields.purpose ?? '', filename: form.filename });
      if (anthropic) return json(res, 200, { id, type: 'file', filename: form.filename, mime_type: 'application/octet-stream', size_bytes: form.file.length, created_at: new Date().toISOString() });
      return json(res, 200, { id, object: 'file', bytes: Buffer.byteLength(form.file), created_at: 1_700_000_000, filename: form.filename, purpose: form.fields.purpose, status: 'processed' });
    }
    if (req.method === 'GET' && (m = /^\/openai\/files\/([^/]+)(\/content)?$/.exec(p))) {
      const file = files.get(decodeURIComponent(m[1]!));
      if (!file) return json(res, 404, { error: { message: 'No such File object', type: 'invalid_request_error' } });
      if (m[2]) return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(file.content);
      return json(res, 200, { id: m[1], object: 'file', bytes: Buffer.byteLength(file.content), created_at: 1_700_000_000, filename: file.filename, purpose: file.purpose, status: 'processed' });
    }
    if (req.method === 'POST' && p === '/openai/batches') {
      const body = JSON.parse(record.body) as { input_file_id: string; endpoint: string; completion_window: string };
      const input = files.get(body.input_file_id);
      if (!input || body.completion_window !== '24h') return json(res, 400, { error: { message: 'bad batch', type: 'invalid_request_error' } });
      const lines = input.content.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Line);
      const b: FakeBatch = { id: `batch_${randomUUID().replace(/-/g, '')}`, family: 'openai', status: 'validating', lines, endpoint: body.endpoint, inputFileId: body.input_file_id, outputFileId: null, errorFileId: null, cancelInitiated: false };
      batches.set(b.id, b);
      return json(res, 200, openaiBatch(b, files));
    }
    if ((m = /^\/openai\/batches\/([^/]+)(\/cancel)?$/.exec(p))) {
      const b = batches.get(m[1]!);
      if (!b) return json(res, 404, { error: { message: 'No batch', type: 'invalid_request_error' } });
      if (m[2] && req.method === 'POST') {
        b.cancelInitiated = true;
        if (b.status === 'validating' || b.status === 'in_progress') b.status = 'cancelling';
      }
      return json(res, 200, openaiBatch(b, files));
    }
    if (req.method === 'POST' && p === '/anthropic/messages/batches') {
      const body = JSON.parse(record.body) as { requests: Array<{ custom_id: string; params: Record<string, unknown> }> };
      const b: FakeBatch = { id: `msgbatch_${randomUUID().replace(/-/g, '')}`, family: 'anthropic', status: 'in_progress', lines: body.requests.map((r) => ({ custom_id: r.custom_id, body: r.params })), endpoint: '/v1/messages', inputFileId: null, outputFileId: null, errorFileId: null, cancelInitiated: false };
      batches.set(b.id, b);
      return json(res, 200, anthropicBatch(b, failIds, origin));
    }
    if ((m = /^\/anthropic\/messages\/batches\/([^/]+)(\/cancel|\/results)?$/.exec(p))) {
      const b = batches.get(m[1]!);
      if (!b) return json(res, 404, { type: 'error', error: { type: 'not_found_error', message: 'No batch' } });
      if (m[2] === '/results') {
        if (b.status !== 'ended') return json(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'not ended' } });
        const lines = b.lines.map((l) => JSON.stringify({
          custom_id: l.custom_id,
          result: b.cancelInitiated ? { type: 'canceled' } : failIds.has(l.custom_id)
            ? { type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error', message: 'bad' } } }
            : { type: 'succeeded', message: { id: 'msg_x', type: 'message', role: 'assistant', model: `${String(l.body.model)}-20250101`, content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: 5 } } },
        }));
        return void res.writeHead(200, { 'content-type': 'application/binary' }).end(lines.join('\n') + '\n');
      }
      if (m[2] === '/cancel' && req.method === 'POST') {
        b.cancelInitiated = true;
        if (b.status === 'in_progress') b.status = 'canceling';
      }
      return json(res, 200, anthropicBatch(b, failIds, origin));
    }
    json(res, 404, { error: { message: `fake: no route ${req.method} ${p}` } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin, requests, batches, files, failIds,
    set(id, status) {
      const b = batches.get(id);
      if (!b) throw new Error(`fake: no batch ${id}`);
      b.status = status;
      writeResults(b);
    },
    statusPolls: (id) => requests.filter((r) => r.method === 'GET' && r.path.endsWith(`/batches/${id}`)),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/**
 * A plugin that keeps the metered work the gateway reports to it (its shared state): files for startTestGateway.
 * The definition is written out (what definePlugin returns) rather than imported from the source's
 * core/public/plugin.ts: a gateway in a child process may run the compiled dist/, which has no TypeScript loader.
 */
export const TALLY_FILES = {
  'tally.mjs': `
export default {
  apiVersion: ${PLUGIN_API_VERSION},
  name: 'tally', description: 'Keeps the metered work it was given.', configSchema: { type: 'object' },
  init: () => ({ seen: [] }),
  setup: () => (ctx, next) => next(),
  async onMeteredWork(work, services, shared) { shared.seen.push(work); },
};`,
};

/** Providers on the fake, the auth plugin on the batch and file routes, the tally plugin, fast polling; `extra` is appended. */
export function batchesConfig(origin: string, extra = ''): string {
  return `
plugins: [./tally.mjs]
providers:
  openai: { baseUrl: ${origin}/openai, apiKey: sk-upstream-openai }
  anthropic: { baseUrl: ${origin}/anthropic, apiKey: sk-ant-upstream }
models:
  - id: small
    provider: openai
    upstreamModel: gpt-4o-mini
  - id: other
    provider: openai
  - id: claude
    provider: anthropic
    upstreamModel: claude-haiku
pipelines:
  - name: batches
    routes: [/v1/batches, /v1/files]
    plugins: [auth]
jobs:
  pollIntervalMs: 10
outbound:
  allowHttp: true
  allowedAddresses: [127.0.0.1]
webhooks:
  backoffMs: 20
${extra}`;
}
