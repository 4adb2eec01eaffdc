/**
 * The passthrough's upstream half on two transports, for bench/passthrough-transports.ts: the gateway's own
 * (UpstreamClient, undici) and http-proxy-3 1.x as the gateway would run it (bench/passthrough-http-proxy.ts,
 * node:http keep-alive agents), both with the same per-origin slots and timeouts. Both do the same work per
 * request: the path join, the header rules, the credential, the body counter, X-Provider. Only the transport
 * differs, so the comparison measures it and nothing else (the gateway's routing and plugins cost both the same).
 * Run as a process: `TRANSPORT=undici|http-proxy-3 UPSTREAM=http://127.0.0.1:N node --import tsx
 * bench/passthrough-transport.ts` prints `{"port": N}`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../test/helpers/config.ts';
import { answerHeaders, BodyLimit, forwardedHeaders } from '../core/dispatch/passthrough.ts';
import { forwardingHeaders, type ForwardingRules } from '../core/dispatch/passthrough-forwarded.ts';
import { joinUnderBase } from '../core/dispatch/passthrough-path.ts';
import { OriginSlots } from '../core/dispatch/origin-slots.ts';
import { UpstreamClient } from '../core/dispatch/upstream.ts';
import { silentLogger } from '../core/logger.ts';
import { PassthroughTransport } from './passthrough-http-proxy.ts';

export type Transport = 'undici' | 'http-proxy-3';

const PREFIX = '/proxy/openai';
const LIMIT_BYTES = 50 * 1024 * 1024;
const CONNECTIONS = 128;
/** The gateway's work with trustProxy off and the client address sent: the most a request can cost. */
const FORWARDING: ForwardingRules = { trust: { trustProxy: false, isTrustedProxy: () => false }, sendClientAddress: true };

function prepare(req: IncomingMessage, baseUrl: string) {
  const target = joinUnderBase(baseUrl, (req.url ?? '/').slice(PREFIX.length) || '/');
  const headers = forwardedHeaders(req.headers, 'bench-request', forwardingHeaders(req, FORWARDING));
  headers.authorization = 'Bearer sk-bench-upstream';
  const hasBody = req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0';
  const body = hasBody ? req.pipe(new BodyLimit(LIMIT_BYTES, '/proxy')) : null;
  return { target, headers, body };
}

function fail(res: ServerResponse, err: Error): void {
  if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { code: 'UPSTREAM_ERROR', message: err.message } }));
}

async function undiciHandler(baseUrl: string) {
  // The gateway's defaults for every upstream setting, but the same pool size as the other transport.
  const { config } = await parseConfig('{}', { file: join(tmpdir(), 'bench-passthrough.yaml'), env: {} });
  const client = new UpstreamClient({ ...config.upstream, connectionsPerOrigin: CONNECTIONS });
  return (req: IncomingMessage, res: ServerResponse) => {
    const { target, headers, body } = prepare(req, baseUrl);
    const controller = new AbortController();
    // As the gateway's gw.signal: aborted only when the answer did not finish.
    res.once('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    client.send(baseUrl, { method: req.method as 'POST', path: target.relative ?? `${target.origin}${target.path}`, headers }, controller.signal, body ?? undefined)
      .then((response) => {
        res.writeHead(response.statusCode, { ...answerHeaders(response.headers), 'x-provider': 'openai' });
        response.body.pipe(res);
      }, (err: Error) => fail(res, err));
  };
}

/** The http-proxy-3 transport as the gateway would run it (bench/passthrough-http-proxy.ts): slots, timeouts and all. */
async function httpProxyHandler(baseUrl: string) {
  const { config } = await parseConfig('{}', { file: join(tmpdir(), 'bench-passthrough.yaml'), env: {} });
  const upstream = { ...config.upstream, connectionsPerOrigin: CONNECTIONS };
  const slots = new OriginSlots(CONNECTIONS, upstream.queueTimeoutMs, silentLogger());
  const transport = new PassthroughTransport(upstream, (origin, signal) => slots.acquire(origin, signal));
  return (req: IncomingMessage, res: ServerResponse) => {
    const { target, headers, body } = prepare(req, baseUrl);
    const controller = new AbortController();
    // As the gateway's gw.signal: aborted only when the answer did not finish.
    res.once('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    transport.send({ req, res, method: req.method ?? 'GET', origin: target.origin, path: target.path, headers, body, signal: controller.signal })
      .then((response) => {
        res.writeHead(response.statusCode, { ...answerHeaders(response.headers), 'x-provider': 'openai' });
        response.body.pipe(res);
      }, (err: Error) => fail(res, err));
  };
}

export async function startTransport(transport: Transport, upstream: string, port = 0): Promise<{ url: string; close(): Promise<void> }> {
  const baseUrl = `${upstream}/v1`;
  const handler = transport === 'undici' ? await undiciHandler(baseUrl) : await httpProxyHandler(baseUrl);
  const server = createServer(handler);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const transport = (process.env.TRANSPORT ?? 'undici') as Transport;
  const server = await startTransport(transport, process.env.UPSTREAM ?? 'http://127.0.0.1:1', Number(process.env.PORT ?? 0));
  process.stdout.write(`${JSON.stringify({ port: Number(new URL(server.url).port) })}\n`);
  process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
}
