/**
 * For the embeddings and rerank translator tests: a loopback fake that records what it got and answers as
 * scripted, and a round trip that builds the translator's request, sends it to the fake over HTTP and reads
 * the answer back through fromUpstream or, for an error status, through the provider's mapError.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EmbeddingsRequest, EmbeddingsResult } from '../../core/canonical/embeddings.ts';
import type { RerankRequest, RerankResult } from '../../core/canonical/rerank.ts';
import type { ProviderDefinition, ProviderIO, ProviderTarget, UpstreamRequest } from '../../core/dispatch/provider.ts';

export interface Seen { method: string; url: string; headers: IncomingMessage['headers']; json: any }
export interface Reply { status?: number; body: unknown }

export interface LoopbackFake {
  url: string;
  seen: Seen[];
  reply(handler: (req: Seen) => Reply): void;
  close(): Promise<void>;
}

export async function startLoopbackFake(): Promise<LoopbackFake> {
  const seen: Seen[] = [];
  let handler: (req: Seen) => Reply = () => ({ status: 500, body: { message: 'no reply scripted' } });
  const server: Server = createServer((raw, res) => {
    const parts: Buffer[] = [];
    raw.on('data', (p: Buffer) => parts.push(p));
    raw.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      const req: Seen = { method: raw.method ?? '', url: raw.url ?? '', headers: raw.headers, json: text.startsWith('{') ? JSON.parse(text) : null };
      seen.push(req);
      const { status = 200, body } = handler(req);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    reply: (h) => { handler = h; },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** The URL the upstream client would send to: the base URL's path, then the request's (or the absolute URL). */
function urlOf(target: ProviderTarget, request: UpstreamRequest): string {
  if (/^https?:\/\//.test(request.path)) return request.path;
  return `${target.baseUrl.replace(/\/+$/, '')}${request.path}`;
}

async function send(provider: ProviderDefinition, target: ProviderTarget, built: UpstreamRequest, io: ProviderIO): Promise<{ status: number; body: unknown }> {
  const request = provider.authorize ? await provider.authorize(built, target, io, AbortSignal.timeout(5000)) : built;
  const response = await fetch(urlOf(target, request), { method: request.method, headers: request.headers, ...(request.body !== undefined ? { body: request.body } : {}) });
  const text = await response.text();
  let body: unknown = text;
  try { body = JSON.parse(text); } catch { /* not JSON */ }
  return { status: response.status, body };
}

/** For providers that sign (SigV4) or exchange nothing; a token exchange gets its own `io` from the test. */
export const noIo: ProviderIO = {
  fetchJson: () => Promise.reject(new Error('no token exchange in this test')),
  cached: () => Promise.reject(new Error('no token exchange in this test')),
  now: () => Date.now(),
};

export async function embedThrough(provider: ProviderDefinition, target: ProviderTarget, request: EmbeddingsRequest, io = noIo): Promise<EmbeddingsResult> {
  const translator = provider.embeddings!;
  const answer = await send(provider, target, translator.toUpstream(request, target), io);
  if (answer.status >= 400) throw provider.mapError(answer.status, answer.body, target);
  return translator.fromUpstream(answer.body, target, request);
}

export async function rerankThrough(provider: ProviderDefinition, target: ProviderTarget, request: RerankRequest, io = noIo): Promise<RerankResult> {
  const translator = provider.rerank!;
  const answer = await send(provider, target, translator.toUpstream(request, target), io);
  if (answer.status >= 400) throw provider.mapError(answer.status, answer.body, target);
  return translator.fromUpstream(answer.body, target, request);
}

/** A deterministic vector per text, so a test can tell which input a vector belongs to. */
export const vectorFor = (text: string, length = 4): number[] =>
  Array.from({ length }, (_, i) => Math.round(((text.length * 31 + i * 7) % 100) / 100 * 1024) / 1024 - 0.5);

/** log(p / (1 - p)): the logit a cross-encoder would return for a relevance p. */
export const logitOf = (p: number): number => Math.log(p / (1 - p));
