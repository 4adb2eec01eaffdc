/**
 * A loopback upstream for vector-store, RAG and file_search tests, by the providers' documented wire formats:
 * - OpenAI files: POST {base}/files multipart (purpose, file) -> a File; GET {base}/files/{id}/content -> the bytes.
 * - OpenAI embeddings: POST {base}/embeddings {model, input} -> {object: list, data: [{index, embedding}], usage}.
 *   The vectors are a deterministic bag of words: each word (lower-cased, punctuation dropped, a short stop list
 *   left out) adds 1 to the dimension its FNV-1a hash picks, so texts sharing words are close by cosine.
 * - OpenAI chat: POST {base}/chat/completions, legacy completions: POST {base}/completions; Anthropic Messages:
 *   POST {base}/messages. They answer a fixed text and record their JSON bodies.
 */
import busboy from 'busboy';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const FAKE_DIMS = 256;
const STOP = new Set(['the', 'a', 'an', 'is', 'of', 'and', 'to', 'in', 'for', 'what', 'which', 'on', 'at', 'it', 'its', 'be', 'are', 'was', 'with', 'by', 'as', 'this', 'that']);

export function bagOfWords(text: string, dims = FAKE_DIMS): number[] {
  const vector = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().split(/[^a-z0-9-]+/)) {
    if (word === '' || STOP.has(word)) continue;
    let hash = 0x811c9dc5;
    for (let i = 0; i < word.length; i++) hash = Math.imul(hash ^ word.charCodeAt(i), 0x01000193) >>> 0;
    vector[hash % dims]! += 1;
  }
  // An empty text would be the zero vector, which has no direction: give it one.
  if (!vector.some((x) => x !== 0)) vector[0] = 1;
  return vector;
}

export interface KnowledgeRequest { method: string; path: string; json?: any }

export interface FakeKnowledge {
  origin: string;
  requests: KnowledgeRequest[];
  /** Provider file id -> bytes. */
  files: Map<string, Buffer>;
  /** Embeddings answer this status while set. */
  failEmbeddings(status: number | null): void;
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function multipartFile(req: IncomingMessage): Promise<{ fields: Record<string, string>; filename: string; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    let filename = '';
    const parts: Buffer[] = [];
    const parser = busboy({ headers: req.headers });
    parser.on('field', (name, value) => { fields[name] = value; });
    parser.on('file', (_name, stream, info) => {
      filename = info.filename ?? '';
      stream.on('data', (chunk: Buffer) => parts.push(chunk));
    });
    parser.on('close', () => resolve({ fields, filename, bytes: Buffer.concat(parts) }));
    parser.on('error', reject);
    req.pipe(parser);
  });
}

export async function startFakeKnowledge(): Promise<FakeKnowledge> {
  const requests: KnowledgeRequest[] = [];
  const files = new Map<string, Buffer>();
  let embeddingsStatus: number | null = null;
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const record: KnowledgeRequest = { method: req.method ?? '', path: url.pathname };
    requests.push(record);
    if (req.method === 'POST' && url.pathname === '/openai/files') {
      const { fields, filename, bytes } = await multipartFile(req);
      const id = `file-${randomUUID().replace(/-/g, '').slice(0, 24)}`;
      files.set(id, bytes);
      return json(res, 200, { id, object: 'file', bytes: bytes.length, created_at: Math.floor(Date.now() / 1000), filename, purpose: fields.purpose, status: 'processed', expires_at: null });
    }
    const content = /^\/openai\/files\/([^/]+)\/content$/.exec(url.pathname);
    if (req.method === 'GET' && content) {
      const bytes = files.get(decodeURIComponent(content[1]!));
      if (!bytes) return json(res, 404, { error: { message: 'No such File object', type: 'invalid_request_error' } });
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) });
      return void res.end(bytes);
    }
    if (req.method === 'POST' && url.pathname === '/openai/embeddings') {
      record.json = JSON.parse((await bodyOf(req)).toString('utf8'));
      if (embeddingsStatus !== null) return json(res, embeddingsStatus, { error: { message: 'embeddings unavailable', type: 'server_error' } });
      const inputs: string[] = typeof record.json.input === 'string' ? [record.json.input] : record.json.input;
      const tokens = inputs.reduce((sum, text) => sum + text.split(/\s+/).length, 0);
      return json(res, 200, {
        object: 'list', model: record.json.model,
        data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: bagOfWords(text) })),
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      });
    }
    if (req.method === 'POST' && (url.pathname === '/openai/chat/completions' || url.pathname === '/anthropic/messages')) {
      record.json = JSON.parse((await bodyOf(req)).toString('utf8'));
      if (url.pathname.startsWith('/anthropic')) {
        return json(res, 200, { id: 'msg_fake', type: 'message', role: 'assistant', model: record.json.model, content: [{ type: 'text', text: 'from the context' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 30, output_tokens: 4 } });
      }
      return json(res, 200, {
        id: 'chatcmpl-fake', object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: record.json.model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'from the context' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 30, completion_tokens: 4, total_tokens: 34 },
      });
    }
    if (req.method === 'POST' && url.pathname === '/openai/completions') {
      record.json = JSON.parse((await bodyOf(req)).toString('utf8'));
      return json(res, 200, {
        id: 'cmpl-fake', object: 'text_completion', created: Math.floor(Date.now() / 1000), model: record.json.model,
        choices: [{ index: 0, text: ' PELICAN-42', logprobs: null, finish_reason: 'stop' }],
        usage: { prompt_tokens: 30, completion_tokens: 4, total_tokens: 34 },
      });
    }
    json(res, 404, { error: { message: `fake: no route ${req.method} ${url.pathname}` } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin, requests, files,
    failEmbeddings: (status) => { embeddingsStatus = status; },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
