/**
 * The passthrough's WebSocket half: an upgrade request that its route's plugins admitted (core/api/proxy-upgrade.ts)
 * goes to the joined upstream URL through http-proxy-3, with the same header rules, credential and `authorize`
 * as an HTTP passthrough request, inside the provider's breaker. The upstream's 101 and every frame after it
 * pass through untouched; an upstream that refuses the upgrade has its answer passed through verbatim.
 */
import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { createProxyServer } from 'http-proxy-3';
import { GatewayError, renderError } from '../errors.ts';
import { countsAsFailure, upstreamRequestPath, type PassthroughDeps, type PassthroughEntry } from './passthrough.ts';
import type { UpstreamTarget } from './passthrough-path.ts';
import type { UpstreamRequest } from './provider.ts';
import { isAbort, transportError } from './upstream-errors.ts';


/** An upgrade request held until its pipeline has admitted it (core/api/proxy-upgrade.ts). */
export interface PendingUpgrade {
  socket: Duplex;
  head: Buffer;
  res: ServerResponse;
}

/** The upgrade's own hop-by-hop headers, put back after the header rules dropped every hop-by-hop one. */
const UPGRADE_HEADERS = { connection: 'Upgrade', upgrade: 'websocket' };

const proxy = createProxyServer({ ws: true, ignorePath: true });
const watchers = new WeakMap<IncomingMessage, (proxyReq: ClientRequest) => void>();
proxy.on('proxyReqWs', (proxyReq, req) => watchers.get(req as IncomingMessage)?.(proxyReq));

/** The caller already has its answer (the upstream's refusal, or the gateway's envelope): nothing more to send. */
export class Answered extends Error {
  constructor(readonly status: number) {
    super(`answered ${status}`);
  }
}

/** A refusal the breaker counts, which the caller still receives verbatim. */
class CountedRefusal extends Error {
  constructor(readonly status: number) {
    super(`upstream answered ${status}`);
  }
}

export function isWebSocketUpgrade(req: IncomingMessage): boolean {
  return req.method === 'GET' && String(req.headers.upgrade ?? '').toLowerCase() === 'websocket';
}

/**
 * Resolves with the upstream's status once it answered the upgrade (101, or a refusal passed through verbatim);
 * throws a GatewayError (breaker open, authorize failed) while the caller can still get an envelope, and
 * Answered once the caller has its answer already.
 */
export async function proxyWebSocket(
  deps: PassthroughDeps, entry: PassthroughEntry, joined: UpstreamTarget, headers: Record<string, string>,
  req: IncomingMessage, upgrade: PendingUpgrade, signal: AbortSignal, timeouts: HandshakeTimeouts,
): Promise<number> {
  const { provider, target } = entry;
  const request: UpstreamRequest = { method: 'GET', path: upstreamRequestPath(joined), headers };
  try {
    return await deps.breakers.run(target.slug, target.baseUrl, async () => {
      const authorized = provider.authorize ? await provider.authorize(request, target, deps.io, signal) : request;
      // http-proxy-3 starts from the incoming request's headers: the filtered, credentialed ones replace them.
      req.headers = { ...authorized.headers, ...UPGRADE_HEADERS };
      return await new Promise<number>((resolve, reject) => {
        watchers.set(req, (proxyReq) => {
          const stop = watchHandshake(proxyReq, timeouts, signal, (failure) => {
            // Answered before the upstream request is torn down: http-proxy-3 closes the caller's socket after that.
            if (failure instanceof GatewayError) writeEnvelope(upgrade, failure);
            reject(failure);
            proxyReq.destroy();
          }, target.slug);
          proxyReq.once('upgrade', () => {
            stop();
            resolve(101);
          });
          proxyReq.once('response', (answer: IncomingMessage) => {
            stop();
            const status = answer.statusCode ?? 502;
            if (countsAsFailure(status)) reject(new CountedRefusal(status));
            else resolve(status);
          });
        });
        proxy.ws(req, upgrade.socket, upgrade.head, { target: new URL(`${joined.origin}${joined.path}`) }, (err) => {
          // http-proxy-3 closes the socket right after this callback: the envelope is written now or never.
          const error = isAbort(err) ? new GatewayError('UPSTREAM_ERROR', 'The client went away') : transportError(target.slug, err, 'request');
          writeEnvelope(upgrade, error);
          reject(error);
        });
      });
    });
  } catch (err) {
    if (err instanceof CountedRefusal) throw new Answered(err.status);
    if (upgrade.res.headersSent) throw new Answered(upgrade.res.statusCode);
    throw err;
  }
}

/** upstream.connectTimeoutMs and upstream.headersTimeoutMs, applied to the upgrade's handshake. */
export interface HandshakeTimeouts {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
}

/**
 * Bounds the handshake as undici bounds an HTTP request: connectTimeoutMs until the connection (TLS included) is
 * up, then headersTimeoutMs until the upstream answers the upgrade. The request's signal ends the attempt too
 * (the gateway closing the caller's socket at shutdown): http-proxy-3 only ends upstream sockets that were
 * upgraded. A caller that hangs up is not seen before the upgrade, since its socket is not read until then.
 * `fail` gets UPSTREAM_TIMEOUT or an AbortError; the returned function stops watching once the upstream answered.
 */
function watchHandshake(proxyReq: ClientRequest, timeouts: HandshakeTimeouts, signal: AbortSignal, fail: (err: Error) => void, provider: string): () => void {
  let timer: NodeJS.Timeout | undefined;
  const arm = (ms: number, setting: string, what: string) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      stop();
      fail(new GatewayError('UPSTREAM_TIMEOUT', `${provider} timed out: ${what} within ${ms} ms (${setting})`, { provider }));
    }, ms);
  };
  const onAbort = () => {
    stop();
    fail(new DOMException('The client went away', 'AbortError'));
  };
  const stop = () => {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  };
  arm(timeouts.connectTimeoutMs, 'upstream.connectTimeoutMs', 'no connection');
  proxyReq.once('socket', (socket: Socket) => {
    const connected = () => arm(timeouts.headersTimeoutMs, 'upstream.headersTimeoutMs', 'no answer to the WebSocket upgrade');
    if (!socket.connecting && !('encrypted' in socket)) connected();
    else socket.once('encrypted' in socket ? 'secureConnect' : 'connect', connected);
  });
  proxyReq.once('close', stop);
  if (signal.aborted) queueMicrotask(onAbort);
  else signal.addEventListener('abort', onAbort, { once: true });
  return stop;
}

function writeEnvelope(upgrade: PendingUpgrade, error: GatewayError): void {
  if (upgrade.res.headersSent || upgrade.socket.destroyed) return;
  const body = JSON.stringify(renderError(error, 'canonical'));
  upgrade.res.writeHead(error.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  upgrade.res.end(body);
}
