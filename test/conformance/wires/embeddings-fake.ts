/**
 * A loopback upstream for the conformance kit's embeddings wires (modalities.ts), for tests that reach past the
 * kit's fixtures: it records each request as the kit does and answers with one fakeVector per input (tokens
 * counted by wordCount, which a wire that reports none ignores), the wire's error body for a status, a body
 * that is not JSON, or a handler. And the two ways the provider tests call it: one translator call without a
 * gateway (callDirect), and a gateway in front of it called with the openai client (startEmbeddingsGateway).
 */
import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import type { EmbeddingsRequest, EmbeddingsResult } from '../../../core/canonical/embeddings.ts';
import type { ProviderDefinition, ProviderIO, ProviderTarget } from '../../../core/dispatch/provider.ts';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import type { RecordedUpstreamRequest } from '../kit.ts';
import type { EmbeddingsWire, WireAnswer } from '../modalities.ts';
import { startRecordingServer } from '../recording-server.ts';

export type { EmbeddingsWire };

/** Tokens as the fakes count them: one per word, so that usage is checkable. */
export const wordCount = (text: string) => text.split(/\s+/).filter(Boolean).length;

/**
 * A vector that names its input: [length of the text, its first character code, then 0.5, 1, 1.5, ...]. Every
 * value is exact in float32, so base64 round-trips compare equal.
 */
export function fakeVector(text: string, length: number): number[] {
  return Array.from({ length }, (_, i) => (i === 0 ? text.length : i === 1 ? text.charCodeAt(0) || 0 : i / 2));
}

export type EmbeddingsFakeMode =
  /** One fakeVector per input, `length` long (the dimensions asked, or the model's own). */
  | { kind: 'answer'; length: number }
  | { kind: 'error'; status: number; message?: string }
  | { kind: 'malformed' }
  | { kind: 'custom'; handle(req: RecordedUpstreamRequest, res: ServerResponse): void };

export interface EmbeddingsFake {
  url: string;
  requests: RecordedUpstreamRequest[];
  mode: EmbeddingsFakeMode;
  /** Requests the wire could not read (answered 599): a test expects none. */
  problems: string[];
  close(): Promise<void>;
}

export async function startEmbeddingsFake(
  wire: EmbeddingsWire,
  extraRoutes?: (req: RecordedUpstreamRequest, res: ServerResponse) => boolean,
): Promise<EmbeddingsFake> {
  const fake: Pick<EmbeddingsFake, 'mode' | 'problems'> = { mode: { kind: 'answer', length: 8 }, problems: [] };
  const server = await startRecordingServer(extraRoutes, (req, res) => {
    const send = (status: number, answer: WireAnswer) => {
      res.writeHead(answer.status ?? status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body);
    };
    const mode = fake.mode;
    try {
      if (mode.kind === 'answer') {
        const { inputs } = wire.summarize(req);
        send(200, wire.answer(inputs.map((text) => fakeVector(text, mode.length)), inputs.reduce((n, text) => n + wordCount(text), 0), req));
      } else if (mode.kind === 'error') send(mode.status, wire.errorBody(mode.status, mode.message ?? `scripted ${mode.status}`));
      else if (mode.kind === 'malformed') send(200, { body: '{"embeddings": [' });
      else mode.handle(req, res);
    } catch (err) {
      // A request the wire cannot read is the test's failure: the fake says so instead of hanging.
      fake.problems.push(`${req.method} ${req.url}: ${String(err)}`);
      send(599, { body: JSON.stringify({ fakeRefused: String(err) }) });
    }
  });
  return Object.assign(fake, server);
}

const io: ProviderIO = {
  async fetchJson(url, init, signal) {
    const response = await fetch(url, { ...init, signal });
    const text = await response.text();
    return { status: response.status, body: text === '' ? null : JSON.parse(text) as unknown };
  },
  cached: (_key, fetchValue) => fetchValue(AbortSignal.timeout(10_000)).then((c) => c.value),
  now: () => Date.now(),
};

/**
 * One embeddings call the way the dispatcher makes it, without a gateway: the translator's request, the
 * provider's authorize (signing, token exchange), the upstream's answer through fromUpstream or mapError.
 */
export async function callDirect(provider: ProviderDefinition, target: ProviderTarget, request: EmbeddingsRequest): Promise<EmbeddingsResult> {
  const built = provider.embeddings!.toUpstream(request, target);
  const signal = AbortSignal.timeout(10_000);
  const sent = provider.authorize ? await provider.authorize(built, target, io, signal) : built;
  const base = new URL(target.baseUrl);
  const url = /^https?:\/\//.test(sent.path) ? sent.path : `${base.origin}${base.pathname.replace(/\/+$/, '')}${sent.path}`;
  const response = await fetch(url, { method: sent.method, headers: sent.headers, ...(sent.body === undefined ? {} : { body: sent.body }), signal });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // kept as text, as the upstream client does for error bodies
  }
  if (response.status >= 400) throw provider.mapError(response.status, body, target, Object.fromEntries(response.headers));
  return provider.embeddings!.fromUpstream(body, target, request);
}

/**
 * A gateway whose /v1/embeddings pipeline (auth only, no retries) serves `providersAndModels` (the `providers:`
 * and `models:` blocks of its config), a key scoped to embeddings, and the openai client with that key.
 */
export async function startEmbeddingsGateway(providersAndModels: string, env?: Record<string, string>): Promise<{ gw: TestGateway; key: string; client: OpenAI }> {
  const gw = await startTestGateway(`
routing:
  retries: 0
${providersAndModels.trim()}
pipelines:
  - name: embeddings
    routes: [/v1/embeddings]
    plugins: [auth]
`, env ? { env } : {});
  const key = await gw.createKey({ scopes: { capabilities: ['embeddings'] } });
  return { gw, key, client: new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 }) };
}
