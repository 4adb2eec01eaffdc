/**
 * A loopback upstream that speaks OpenAI's chat-completions wire format, records what it receives, and can
 * be scripted per test. Streams are written in pieces split at awkward byte offsets, as real networks do.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  /** Set when the connection closed before the fake finished its answer. */
  aborted: boolean;
}

export type FakeHandler = (req: RecordedRequest, res: ServerResponse, raw: IncomingMessage) => void | Promise<void>;

export interface FakeOpenAI {
  url: string;
  /** Base URL to configure as the provider's baseUrl. */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Replaces the default behaviour until reset() */
  handle(handler: FakeHandler): void;
  reset(): void;
  close(): Promise<void>;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function completion(model: string, content: string) {
  return {
    id: 'chatcmpl-fake1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
  };
}

export function chunk(model: string, delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) {
  return { id: 'chatcmpl-fake1', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra };
}

/** The events of a streamed "Hello world", with the usage chunk when the request asked for it. */
export function helloStreamEvents(body: Record<string, unknown>, words = ['Hello', ' world']): string[] {
  const model = String(body.model);
  const withUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  const usageNull = withUsage ? { usage: null } : {};
  const events = [
    chunk(model, { role: 'assistant', content: '' }, null, usageNull),
    ...words.map((w) => chunk(model, { content: w }, null, usageNull)),
    chunk(model, {}, 'stop', usageNull),
  ].map((c) => `data: ${JSON.stringify(c)}\n\n`);
  if (withUsage) events.push(`data: ${JSON.stringify({ ...chunk(model, {}), choices: [], usage: { prompt_tokens: 9, completion_tokens: words.length, total_tokens: 9 + words.length } })}\n\n`);
  events.push('data: [DONE]\n\n');
  return events;
}

/** Writes events as SSE, each cut in two at an awkward offset, pausing between writes. */
export async function writeSplit(res: ServerResponse, events: string[], pauseMs = 2): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const [i, event] of events.entries()) {
    const bytes = Buffer.from(event);
    const cut = 1 + ((i * 7) % Math.max(1, bytes.length - 1));
    res.write(bytes.subarray(0, cut));
    await sleep(pauseMs);
    res.write(bytes.subarray(cut));
    await sleep(pauseMs);
  }
  res.end();
}

const defaultHandler: FakeHandler = async (req, res) => {
  if (req.path.endsWith('/chat/completions')) {
    if (req.body.stream === true) return writeSplit(res, helloStreamEvents(req.body));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(completion(String(req.body.model), 'Hello world')));
    return;
  }
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message: `no route ${req.path}`, type: 'invalid_request_error' } }));
};

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  let handler: FakeHandler = defaultHandler;
  const requests: RecordedRequest[] = [];
  const server = createServer((raw, res) => {
    const parts: Buffer[] = [];
    raw.on('data', (part: Buffer) => parts.push(part));
    raw.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      let body: Record<string, unknown> = {};
      try {
        body = text ? JSON.parse(text) : {};
      } catch {
        body = { unparsable: text };
      }
      const recorded: RecordedRequest = { method: raw.method ?? '', path: raw.url ?? '', headers: raw.headers, body, aborted: false };
      requests.push(recorded);
      res.on('close', () => {
        if (!res.writableFinished) recorded.aborted = true;
      });
      Promise.resolve(handler(recorded, res, raw)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    baseUrl: `${url}/v1`,
    requests,
    handle(h) {
      handler = h;
    },
    reset() {
      handler = defaultHandler;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
