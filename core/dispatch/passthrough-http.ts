/**
 * The passthrough's HTTP transport: http-proxy-3 1.x over node:http / node:https keep-alive agents, one pair per
 * gateway, owned by the upstream client (core/dispatch/upstream.ts) so that passthrough and translated calls to
 * an origin share its request slots (core/dispatch/origin-slots.ts: upstream.connectionsPerOrigin and
 * upstream.queueTimeoutMs). What undici does for translated calls is done here by hand, with the same settings:
 * connectTimeoutMs until the connection (TLS included) is up, headersTimeoutMs from the end of the request to
 * the answer's headers, bodyTimeoutMs of silence between two pieces of the answer. The answer is handed back
 * unread (selfHandleResponse): status, headers and body go to the caller through the route, as they arrive.
 */
import { Agent as HttpAgent, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { createProxyServer } from 'http-proxy-3';
import type { UpstreamConfig } from '../config/types.ts';

export interface ProxyExchange {
  /** The caller's request and response: http-proxy-3 builds on one and aborts when the other closes. */
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  /** scheme://host[:port] of the upstream. */
  origin: string;
  /** The path and query exactly as they go on the request line (never re-parsed). */
  path: string;
  headers: Record<string, string>;
  /** The caller's body as it arrives, or null. */
  body: Readable | null;
  signal: AbortSignal;
}

export interface ProxyAnswer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: IncomingMessage;
}

/** Same codes as undici's, so that transportError() maps them to 504 UPSTREAM_TIMEOUT alike. */
const timeoutError = (code: string, message: string) => Object.assign(new Error(message), { code });

type Acquire = (origin: string, signal: AbortSignal) => Promise<() => void>;

interface Watcher {
  onRequest(proxyReq: ClientRequest, socket: Socket): void;
  onResponse(proxyRes: IncomingMessage): void;
}

export class PassthroughTransport {
  private readonly proxy = createProxyServer({ selfHandleResponse: true, toProxy: true });
  private readonly httpAgent: HttpAgent;
  private readonly httpsAgent: HttpsAgent;
  private readonly watchers = new WeakMap<IncomingMessage, Watcher>();
  /** The headers an exchange sends, while http-proxy-3 builds its request. */
  private readonly outgoing = new WeakMap<IncomingMessage, IncomingHttpHeaders>();

  constructor(private readonly config: UpstreamConfig, private readonly acquire: Acquire) {
    // `timeout` closes a connection idle this long, in the pool or not: upstream.keepAliveTimeoutMs.
    const agent = { keepAlive: true, maxSockets: config.connectionsPerOrigin, timeout: config.keepAliveTimeoutMs };
    this.httpAgent = new HttpAgent(agent);
    this.httpsAgent = new HttpsAgent(agent);
    // Its deleteLength pass gives a DELETE without Content-Length a zero one, which would leave a chunked body
    // unframed: the headers of the exchange are put back right before the request is made.
    this.proxy.before('web', 'stream', (req) => {
      const headers = this.outgoing.get(req);
      if (headers) req.headers = { ...headers };
    });
    this.proxy.on('proxyReq', (proxyReq, req, _res, _options, socket) => this.watchers.get(req)?.onRequest(proxyReq, socket));
    this.proxy.on('proxyRes', (proxyRes, req) => this.watchers.get(req)?.onResponse(proxyRes));
  }

  /**
   * Resolves with the answer once its headers arrived, body unread; rejects with a transport error (codes as
   * undici's), the body stream's own error (the caller's fault), or an AbortError when the caller left.
   */
  async send(exchange: ProxyExchange): Promise<ProxyAnswer> {
    const release = await this.acquire(exchange.origin, exchange.signal);
    const { req, signal } = exchange;
    return new Promise<ProxyAnswer>((resolve, reject) => {
      let proxyReq: ClientRequest | undefined;
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      let connected = false;
      let sent = false;
      const arm = (ms: number, onTimeout: () => void) => {
        clearTimeout(timer);
        timer = setTimeout(onTimeout, ms);
      };
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.watchers.delete(req);
        release();
        proxyReq?.destroy();
        reject(err);
      };
      const onAbort = () => fail(new DOMException('The client went away', 'AbortError'));
      // The answer's headers are awaited from the moment the whole request is on a live connection.
      const awaitHeaders = () => {
        if (connected && sent && !settled) {
          arm(this.config.headersTimeoutMs, () => fail(timeoutError('UND_ERR_HEADERS_TIMEOUT', `no answer within ${this.config.headersTimeoutMs} ms`)));
        }
      };
      arm(this.config.connectTimeoutMs, () => fail(timeoutError('UND_ERR_CONNECT_TIMEOUT', `no connection within ${this.config.connectTimeoutMs} ms`)));
      this.watchers.set(req, {
        onRequest: (request, socket) => {
          proxyReq = request;
          if (settled) {
            request.destroy();
            return;
          }
          request.once('finish', () => {
            sent = true;
            awaitHeaders();
          });
          const up = () => {
            connected = true;
            clearTimeout(timer);
            awaitHeaders();
          };
          // A pooled connection is up already; a new one is up once TCP (and TLS) completed.
          if (!socket.connecting) up();
          else socket.once('encrypted' in socket ? 'secureConnect' : 'connect', up);
        },
        onResponse: (proxyRes) => {
          if (settled) {
            proxyRes.destroy();
            return;
          }
          settled = true;
          signal.removeEventListener('abort', onAbort);
          this.watchers.delete(req);
          proxyRes.once('close', () => {
            clearTimeout(timer);
            release();
          });
          this.watchBody(proxyRes, (ms, onTimeout) => arm(ms, onTimeout));
          resolve({ statusCode: proxyRes.statusCode ?? 502, headers: proxyRes.headers, body: proxyRes });
        },
      });
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      exchange.body?.once('error', fail);
      try {
        this.forward(exchange, fail);
      } catch (err) {
        // node:http refuses some requests synchronously (a header value it will not write).
        fail(err as Error);
      }
    });
  }

  async close(): Promise<void> {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  /** upstream.bodyTimeoutMs of silence between two pieces of the answer destroys it (the caller's answer is cut). */
  private watchBody(proxyRes: IncomingMessage, arm: (ms: number, onTimeout: () => void) => void): void {
    const ms = this.config.bodyTimeoutMs;
    const onTimeout = () => proxyRes.destroy(timeoutError('UND_ERR_BODY_TIMEOUT', `no data for ${ms} ms`));
    arm(ms, onTimeout);
    // Watched on the socket: a 'data' listener on the answer itself would start it flowing before the caller reads.
    const socket = proxyRes.socket;
    const moved = () => arm(ms, onTimeout);
    socket.on('data', moved);
    proxyRes.once('close', () => socket.off('data', moved));
  }

  private forward(exchange: ProxyExchange, fail: (err: Error) => void): void {
    const { req, res, method, origin, path, body } = exchange;
    const target = new URL(origin);
    // About a dozen 'close' listeners per answer (the gateway's, http-proxy-3's, Koa's pipeline): bounded, no leak.
    res.setMaxListeners(Math.max(res.getMaxListeners(), 20));
    const headers: Record<string, string> = { ...exchange.headers };
    // The caller's Transfer-Encoding is hop-by-hop and was dropped: a body of unknown length goes chunked.
    if (body && headers['content-length'] === undefined) headers['transfer-encoding'] = 'chunked';
    // http-proxy-3 builds its request from the incoming one, synchronously: it sees the upstream's path (sent as
    // written with toProxy, where a target path would go through `new URL()`) and the filtered headers, then
    // the caller's are put back for the access log and everything after.
    const callerUrl = req.url;
    const callerHeaders = req.headers;
    req.url = path;
    req.headers = headers;
    this.outgoing.set(req, { ...headers });
    try {
      this.proxy.web(req, res, {
        target,
        method,
        agent: target.protocol === 'https:' ? this.httpsAgent : this.httpAgent,
        buffer: body ?? Readable.from([]),
      }, (err) => fail(err));
    } finally {
      this.outgoing.delete(req);
      req.url = callerUrl;
      req.headers = callerHeaders;
    }
  }
}
