/**
 * The passthrough's HTTP half as it would run on http-proxy-3 1.x, for bench/passthrough-transport.ts: node:http /
 * node:https keep-alive agents, the gateway's per-origin slots (core/dispatch/origin-slots.ts), and by hand what
 * undici does for the gateway: connectTimeoutMs until the connection (TLS included) is up, headersTimeoutMs from
 * the end of the request to the answer's headers, bodyTimeoutMs of silence between two pieces of the answer. The
 * answer is handed back unread (selfHandleResponse). It passed the gateway's passthrough tests in place of
 * undici, and measured a higher CPU cost per request than undici (docs/architecture.md, "Passthrough
 * transports"), so the gateway does not use it: it stays here so that the comparison can be run again.
 */
import { Agent as HttpAgent, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { createProxyServer } from 'http-proxy-3';
import type { UpstreamConfig } from '../core/config/types.ts';

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

/** The target object per origin, parsed once (origins are a handful per config, plus follow-up hosts). */
const MAX_TARGETS = 1024;

export class PassthroughTransport {
  private readonly proxy = createProxyServer({ selfHandleResponse: true, toProxy: true });
  private readonly httpAgent: HttpAgent;
  private readonly httpsAgent: HttpsAgent;
  private readonly exchanges = new WeakMap<IncomingMessage, Exchange>();
  private readonly targets = new Map<string, URL>();

  constructor(private readonly config: UpstreamConfig, private readonly acquire: Acquire) {
    // `timeout` closes a connection idle this long, in the pool or not: upstream.keepAliveTimeoutMs.
    const agent = { keepAlive: true, maxSockets: config.connectionsPerOrigin, timeout: config.keepAliveTimeoutMs };
    this.httpAgent = new HttpAgent(agent);
    this.httpsAgent = new HttpsAgent(agent);
    // Its deleteLength pass gives a DELETE without Content-Length a zero one, which would leave a chunked body
    // unframed: the exchange's headers are put in right before the request is made.
    this.proxy.before('web', 'stream', (req) => {
      const exchange = this.exchanges.get(req);
      if (exchange) req.headers = exchange.headers;
    });
    this.proxy.on('proxyReq', (proxyReq, req, _res, _options, socket) => this.exchanges.get(req)?.onRequest(proxyReq, socket));
    this.proxy.on('proxyRes', (proxyRes, req) => this.exchanges.get(req)?.onResponse(proxyRes));
  }

  /**
   * Resolves with the answer once its headers arrived, body unread; rejects with a transport error (codes as
   * undici's), the body stream's own error (the caller's fault), or an AbortError when the caller left.
   */
  async send(call: ProxyExchange): Promise<ProxyAnswer> {
    const release = await this.acquire(call.origin, call.signal);
    const exchange = new Exchange(this.config, call, release, this.exchanges);
    if (call.signal.aborted) exchange.handleEvent();
    else this.forward(call, exchange);
    return exchange.answer;
  }

  async close(): Promise<void> {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  private target(origin: string): URL {
    let target = this.targets.get(origin);
    if (!target) {
      target = new URL(origin);
      if (this.targets.size < MAX_TARGETS) this.targets.set(origin, target);
    }
    return target;
  }

  private forward(call: ProxyExchange, exchange: Exchange): void {
    const { req, res, method, body } = call;
    const target = this.target(call.origin);
    // About a dozen 'close' listeners per answer (the gateway's, http-proxy-3's, Koa's pipeline): bounded, no leak.
    if (res.getMaxListeners() < 20) res.setMaxListeners(20);
    // http-proxy-3 builds its request from the incoming one, synchronously: it sees the upstream's path (sent as
    // written with toProxy, where a target path would go through `new URL()`) and the exchange's headers, then
    // the caller's are put back for the access log and everything after.
    const callerUrl = req.url;
    const callerHeaders = req.headers;
    req.url = call.path;
    // The passes before the request is made (deleteLength) edit a placeholder, not the caller's headers.
    req.headers = {};
    this.exchanges.set(req, exchange);
    try {
      this.proxy.web(req, res, {
        target,
        method,
        agent: target.protocol === 'https:' ? this.httpsAgent : this.httpAgent,
        buffer: body ?? Readable.from([]),
      }, exchange.fail);
    } catch (err) {
      // node:http refuses some requests synchronously (a header value it will not write).
      exchange.fail(err as Error);
    } finally {
      req.url = callerUrl;
      req.headers = callerHeaders;
    }
  }
}

/**
 * One request's way to the answer's headers, then its body timeout. A class rather than closures: a few
 * allocations per request instead of a dozen. It listens to the caller's signal as an EventListener object.
 */
class Exchange {
  readonly answer: Promise<ProxyAnswer>;
  readonly headers: IncomingHttpHeaders;
  readonly fail = (err: Error): void => this.settle(err);
  private resolve!: (answer: ProxyAnswer) => void;
  private reject!: (err: Error) => void;
  private proxyReq: ClientRequest | undefined;
  private proxyRes: IncomingMessage | undefined;
  private upstreamSocket: Socket | undefined;
  private settled = false;
  private connected = false;
  private sent = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly onConnect = (): void => {
    this.connected = true;
    this.awaitHeaders();
  };
  private readonly onFinish = (): void => {
    this.sent = true;
    this.awaitHeaders();
  };
  private readonly onTimeout = (): void => this.timedOut();
  private readonly onData = (): void => {
    this.timer?.refresh();
  };
  private readonly onClose = (): void => this.closed();

  constructor(
    private readonly config: UpstreamConfig, private readonly call: ProxyExchange,
    private readonly release: () => void, private readonly registry: WeakMap<IncomingMessage, Exchange>,
  ) {
    this.answer = new Promise<ProxyAnswer>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    const headers: IncomingHttpHeaders = { ...call.headers };
    // The caller's Transfer-Encoding is hop-by-hop and was dropped: a body of unknown length goes chunked.
    if (call.body && headers['content-length'] === undefined) headers['transfer-encoding'] = 'chunked';
    this.headers = headers;
    call.body?.once('error', this.fail);
    call.signal.addEventListener('abort', this);
    this.timer = setTimeout(this.onTimeout, config.connectTimeoutMs);
  }

  /** The caller's signal aborted: it left. */
  handleEvent(): void {
    this.settle(new DOMException('The client went away', 'AbortError'));
  }

  onRequest(proxyReq: ClientRequest, socket: Socket): void {
    this.proxyReq = proxyReq;
    if (this.settled) {
      proxyReq.destroy();
      return;
    }
    proxyReq.once('finish', this.onFinish);
    // A pooled connection is up already; a new one is up once TCP (and TLS) completed.
    if (!socket.connecting) this.onConnect();
    else socket.once('encrypted' in socket ? 'secureConnect' : 'connect', this.onConnect);
  }

  onResponse(proxyRes: IncomingMessage): void {
    if (this.settled) {
      proxyRes.destroy();
      return;
    }
    this.settled = true;
    this.proxyRes = proxyRes;
    this.call.signal.removeEventListener('abort', this);
    this.registry.delete(this.call.req);
    // upstream.bodyTimeoutMs of silence between two pieces of the answer destroys it (the caller's is cut). Watched
    // on the socket: a 'data' listener on the answer itself would start it flowing before the caller reads.
    this.rearm(this.config.bodyTimeoutMs);
    this.upstreamSocket = proxyRes.socket;
    this.upstreamSocket.on('data', this.onData);
    proxyRes.once('close', this.onClose);
    this.resolve({ statusCode: proxyRes.statusCode ?? 502, headers: proxyRes.headers, body: proxyRes });
  }

  /** The answer's headers are awaited from the moment the whole request is on a live connection. */
  private awaitHeaders(): void {
    if (this.connected && this.sent && !this.settled) this.rearm(this.config.headersTimeoutMs);
  }

  private rearm(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(this.onTimeout, ms);
  }

  private timedOut(): void {
    if (this.proxyRes) {
      this.proxyRes.destroy(timeoutError('UND_ERR_BODY_TIMEOUT', `no data for ${this.config.bodyTimeoutMs} ms`));
    } else if (!this.connected) {
      this.settle(timeoutError('UND_ERR_CONNECT_TIMEOUT', `no connection within ${this.config.connectTimeoutMs} ms`));
    } else {
      this.settle(timeoutError('UND_ERR_HEADERS_TIMEOUT', `no answer within ${this.config.headersTimeoutMs} ms`));
    }
  }

  private closed(): void {
    clearTimeout(this.timer);
    this.upstreamSocket?.off('data', this.onData);
    this.release();
  }

  /** A failure before the answer's headers: the place is freed and the upstream request torn down. */
  private settle(err: Error): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.call.signal.removeEventListener('abort', this);
    this.registry.delete(this.call.req);
    this.release();
    this.proxyReq?.destroy();
    this.reject(err);
  }
}
