/**
 * The loopback upstream of the benchmarks: OpenAI's chat-completions wire format, written for speed with plain
 * node:http and answers built once. The model name picks the behaviour, so every gateway passes it unchanged:
 *
 *   bench          answers at once (JSON), or streams STREAM_CHUNKS content chunks STREAM_PACE_MS apart
 *   bench-delay    answers after DELAY_MS (JSON)
 *
 * Every streamed content chunk carries `t<ns>`: process.hrtime.bigint() when it was written, in base 36. That clock
 * is the machine's monotonic clock, shared by every process, so the load generator measures each chunk's transit
 * time. Base 36 because thirteen or more decimal digits can pass for a payment card number (when the Luhn check
 * happens to hold), which the guards variant's default PII check blocks, ending the stream.
 * GET /stats answers the request count (Portkey is checked to really reach this server); POST /stats resets it.
 * Run as a process: `node --import tsx bench/upstream.ts` prints `{"port": N}` once it listens.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const DELAY_MS = 20;
export const STREAM_CHUNKS = 10;
export const STREAM_PACE_MS = 10;

/** The chat request every benchmark sends (model `bench`: answered at once). */
export const CHAT_BODY = JSON.stringify({
  model: 'bench',
  messages: [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'Say hello to the benchmark, in one short sentence.' },
  ],
  max_tokens: 32,
});

/** The same request streamed: STREAM_CHUNKS chunks, STREAM_PACE_MS apart. */
export const STREAM_CHAT_BODY = CHAT_BODY.replace(/}$/, ',"stream":true}');

/** What the measuring tools (cpu-split.ts, allocations.ts) send: the streamed request when STREAM=1 is set. */
export const measuredBody = (): string => (process.env.STREAM === '1' ? STREAM_CHAT_BODY : CHAT_BODY);

const MODEL = /"model"\s*:\s*"([^"]*)"/;
const STREAM = /"stream"\s*:\s*true/;

function completionBody(model: string): Buffer {
  return Buffer.from(JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the bench upstream.' }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
  }));
}

const chunkHead = (model: string) => `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":${JSON.stringify(model)},"choices":[{"index":0,"delta":{`;

export interface Upstream {
  url: string;
  server: Server;
  requests(): number;
  close(): Promise<void>;
}

export async function startUpstream(port = 0): Promise<Upstream> {
  const bodies = new Map<string, Buffer>();
  let count = 0;
  const jsonHeaders = (length: number) => ({ 'content-type': 'application/json', 'content-length': length });

  function answerJson(res: ServerResponse, model: string) {
    let body = bodies.get(model);
    if (!body) bodies.set(model, (body = completionBody(model)));
    res.writeHead(200, jsonHeaders(body.length));
    res.end(body);
  }

  function answerStream(res: ServerResponse, model: string) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const head = chunkHead(model);
    let i = 0;
    const tick = () => {
      if (res.destroyed) return;
      if (i < STREAM_CHUNKS) {
        const role = i === 0 ? '"role":"assistant",' : '';
        res.write(`${head}${role}"content":"t${process.hrtime.bigint().toString(36)} "},"finish_reason":null}],"usage":null}\n\n`);
        i++;
        setTimeout(tick, STREAM_PACE_MS);
        return;
      }
      res.write(`${head}},"finish_reason":"stop"}],"usage":null}\n\n`);
      res.write(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":${JSON.stringify(model)},"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":${STREAM_CHUNKS},"total_tokens":${12 + STREAM_CHUNKS}}}\n\n`);
      res.end('data: [DONE]\n\n');
    };
    tick();
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url === '/stats') {
      if (req.method === 'POST') count = 0;
      const body = Buffer.from(JSON.stringify({ requests: count }));
      res.writeHead(200, jsonHeaders(body.length));
      res.end(body);
      req.resume();
      return;
    }
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      count++;
      const text = parts.length === 1 ? parts[0]!.toString('latin1') : Buffer.concat(parts).toString('latin1');
      const model = MODEL.exec(text)?.[1] ?? 'bench';
      if (STREAM.test(text)) return answerStream(res, model);
      if (model === 'bench-delay') setTimeout(() => answerJson(res, model), DELAY_MS);
      else answerJson(res, model);
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    server,
    requests: () => count,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const upstream = await startUpstream(Number(process.env.PORT ?? 0));
  process.stdout.write(`${JSON.stringify({ port: Number(new URL(upstream.url).port) })}\n`);
  process.on('SIGTERM', () => void upstream.close().then(() => process.exit(0)));
}
