/**
 * A loopback upstream speaking the batch APIs the gateway polls only, by their documented wire formats; batches
 * are made by the test (`create`), as they would be on the provider outside the gateway, and moved by `set`:
 * - Azure OpenAI, under /azure/openai: GET /batches/{id}?api-version=, POST /batches/{id}/cancel, GET /files/{id},
 *   GET /files/{id}/content (OpenAI's batch and file objects; api-key header).
 * - Gemini, under /gemini/v1beta: GET /batches/{name} (an operation: metadata {state, batchStats}, response
 *   {responsesFile}), POST /batches/{name}:cancel, GET /files/{name}, and the results file from
 *   /download/gemini/v1beta/files/{name}:download?alt=media.
 * At a completed state each request's result is written; requests whose key is in `failIds` fail, every other
 * one succeeds with usage 10 in + 5 out.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Recorded } from './batches.ts';

export interface PolledBatch {
  id: string; family: 'azure' | 'gemini'; state: string; keys: string[]; outputFile: string | null; errorFile: string | null;
  /** Gemini only: the results are inlined in the batch (a batch made with inline requests) instead of a file. */
  inline: boolean;
  inlined: unknown[] | null;
}

export interface FakePolledApis {
  origin: string;
  requests: Recorded[];
  failIds: Set<string>;
  files: Map<string, string>;
  /** A batch made on the provider: Azure's starts `validating`, Gemini's `BATCH_STATE_PENDING`. */
  create(family: 'azure' | 'gemini', keys: string[], options?: { inline?: boolean }): PolledBatch;
  /** Azure's statuses (completed writes the files), or Gemini's states (BATCH_STATE_SUCCEEDED writes the file). */
  set(id: string, state: string): void;
  statusPolls(id: string): Recorded[];
  close(): Promise<void>;
}

const json = (res: ServerResponse, status: number, body: unknown) => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
const ended = (b: PolledBatch) => b.outputFile !== null || b.errorFile !== null || b.inlined !== null;

export async function startFakePolledApis(): Promise<FakePolledApis> {
  const requests: Recorded[] = [];
  const batches = new Map<string, PolledBatch>();
  const files = new Map<string, string>();
  const failIds = new Set<string>();

  function writeResults(b: PolledBatch): void {
    const ok = b.keys.filter((k) => !failIds.has(k));
    const bad = b.keys.filter((k) => failIds.has(k));
    if (b.family === 'azure') {
      const write = (lines: string[]) => {
        const id = `file-${randomUUID().replace(/-/g, '')}`;
        files.set(id, lines.map((l) => `${l}\n`).join(''));
        return id;
      };
      b.outputFile = write(ok.map((k) => JSON.stringify({ custom_id: k, response: { status_code: 200, body: { model: 'gpt-4o-mini-2024-07-18', usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } } }, error: null })));
      if (bad.length > 0) b.errorFile = write(bad.map((k) => JSON.stringify({ custom_id: k, response: { status_code: 400, body: { error: { message: 'bad' } } }, error: null })));
      return;
    }
    const response = { candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }, modelVersion: 'gemini-2.5-flash-001' };
    const error = { code: 400, message: 'bad', status: 'INVALID_ARGUMENT' };
    if (b.inline) {
      // Inlined: in request order, each with the request's metadata.
      b.inlined = b.keys.map((k) => (failIds.has(k) ? { error, metadata: { key: k } } : { response, metadata: { key: k } }));
      return;
    }
    // Gemini writes one file: successes and errors, each line keyed.
    const name = `files/batch-${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    files.set(name, b.keys.map((k) => `${JSON.stringify(failIds.has(k) ? { key: k, error } : { key: k, response })}\n`).join(''));
    b.outputFile = name;
  }

  function azureBatch(b: PolledBatch) {
    const lines = (id: string | null) => (id === null ? 0 : files.get(id)!.split('\n').filter(Boolean).length);
    return {
      id: b.id, object: 'batch', endpoint: '/chat/completions', input_file_id: 'file-input', completion_window: '24h', status: b.state,
      output_file_id: b.outputFile, error_file_id: b.errorFile, created_at: 1_700_000_000,
      request_counts: { total: b.keys.length, completed: lines(b.outputFile), failed: lines(b.errorFile) },
    };
  }

  function geminiBatch(b: PolledBatch) {
    const failed = ended(b) ? b.keys.filter((k) => failIds.has(k)).length : 0;
    const succeeded = ended(b) ? b.keys.length - failed : 0;
    const stats = { requestCount: String(b.keys.length), successfulRequestCount: String(succeeded), failedRequestCount: String(failed), pendingRequestCount: String(b.keys.length - succeeded - failed) };
    const done = !['BATCH_STATE_PENDING', 'BATCH_STATE_RUNNING'].includes(b.state);
    return {
      name: b.id,
      metadata: { '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch', model: 'models/gemini-2.5-flash', displayName: 'outside', state: b.state, batchStats: stats, name: b.id },
      done,
      ...(done && b.outputFile ? { response: { '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatchOutput', responsesFile: b.outputFile } } : {}),
      ...(done && b.inlined ? { response: { '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatchOutput', inlinedResponses: { inlinedResponses: b.inlined } } } : {}),
    };
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const p = decodeURIComponent(url.pathname);
    requests.push({ method: req.method ?? '', path: url.pathname + url.search, headers: req.headers, body: '', at: Date.now() });
    req.resume();
    let m: RegExpExecArray | null;
    if ((m = /^\/azure\/openai\/batches\/([^/]+)(\/cancel)?$/.exec(p))) {
      const b = batches.get(m[1]!);
      if (!b || b.family !== 'azure') return json(res, 404, { error: { code: '404', message: 'Batch not found' } });
      if (m[2] && req.method === 'POST') b.state = 'cancelling';
      return json(res, 200, azureBatch(b));
    }
    if ((m = /^\/azure\/openai\/files\/([^/]+?)(\/content)?$/.exec(p))) {
      const content = files.get(m[1]!);
      if (content === undefined) return json(res, 404, { error: { code: '404', message: 'File not found' } });
      if (m[2]) return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(content);
      return json(res, 200, { id: m[1], object: 'file', bytes: Buffer.byteLength(content), filename: `${m[1]}.jsonl`, purpose: 'batch_output', status: 'processed' });
    }
    if ((m = /^\/gemini\/v1beta\/batches\/([^/:]+)(:cancel)?$/.exec(p))) {
      const b = batches.get(`batches/${m[1]!}`);
      if (!b || b.family !== 'gemini') return json(res, 404, { error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' } });
      if (m[2] && req.method === 'POST') {
        b.state = 'BATCH_STATE_CANCELLED';
        return json(res, 200, {});
      }
      return json(res, 200, geminiBatch(b));
    }
    if ((m = /^\/gemini\/v1beta\/files\/([^/:]+)$/.exec(p))) {
      const content = files.get(`files/${m[1]!}`);
      if (content === undefined) return json(res, 404, { error: { code: 404, message: 'not found', status: 'NOT_FOUND' } });
      return json(res, 200, { name: `files/${m[1]}`, displayName: 'batch-results.jsonl', mimeType: 'application/jsonl', sizeBytes: String(Buffer.byteLength(content)) });
    }
    if ((m = /^\/download\/gemini\/v1beta\/files\/([^/:]+):download$/.exec(p)) && url.searchParams.get('alt') === 'media') {
      const content = files.get(`files/${m[1]!}`);
      if (content === undefined) return json(res, 404, { error: { code: 404, message: 'not found', status: 'NOT_FOUND' } });
      return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(content);
    }
    json(res, 404, { error: { message: `fake: no route ${req.method} ${p}` } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin, requests, failIds, files,
    create(family, keys, options = {}) {
      const suffix = randomUUID().replace(/-/g, '').slice(0, 16);
      const b: PolledBatch = {
        id: family === 'azure' ? `batch_${suffix}` : `batches/${suffix}`, family, state: family === 'azure' ? 'validating' : 'BATCH_STATE_PENDING', keys,
        outputFile: null, errorFile: null, inline: options.inline === true, inlined: null,
      };
      batches.set(b.id, b);
      return b;
    },
    set(id, state) {
      const b = batches.get(id);
      if (!b) throw new Error(`fake: no batch ${id}`);
      b.state = state;
      if (!ended(b) && (state === 'completed' || state === 'BATCH_STATE_SUCCEEDED')) writeResults(b);
    },
    statusPolls: (id) => requests.filter((r) => r.method === 'GET' && r.path.split('?')[0] === `/${id.startsWith('batches/') ? 'gemini/v1beta' : 'azure/openai/batches'}/${id}`),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
