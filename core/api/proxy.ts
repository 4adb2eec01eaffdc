/**
 * The passthrough: `/proxy/<provider>/<path>` forwards any method, path and query under it to that provider's
 * configured base URL, with the gateway's credential instead of the caller's (core/dispatch/passthrough.ts).
 * It runs after its route's plugins like every data-plane route: pipelines.yaml names it `/proxy`, and it needs
 * the `proxy` capability. Bodies stream both ways and are never held: the request body goes upstream as it
 * arrives (counted against server.proxyBodyLimitBytes), the answer goes back as it arrives, status, headers and
 * body verbatim, with X-Provider added. A GET that asks for a WebSocket upgrade is admitted the same way and then
 * proxied to the provider's WebSocket API (core/api/proxy-upgrade.ts, core/dispatch/passthrough-ws.ts).
 */
import { drainRefused } from '../ingress/drain.ts';
import type { JsonSchema } from '../json-schema.ts';
import {
  answerHeaders, BodyLimit, forwardedHeaders, passthroughTargets, sendPassthrough, tooLarge,
  upstreamRequestPath, withCredential, type PassthroughEntry,
} from '../dispatch/passthrough.ts';
import { forwardingHeaders, forwardingRules } from '../dispatch/passthrough-forwarded.ts';
import { joinUnderBase } from '../dispatch/passthrough-path.ts';
import { Answered, isWebSocketUpgrade, proxyWebSocket } from '../dispatch/passthrough-ws.ts';
import { upgradeOf } from './proxy-upgrade.ts';
import type { UpstreamMethod } from '../dispatch/provider.ts';
import { GatewayError } from '../errors.ts';
import type { LocalEndpoint, LocalEndpointDeps } from '../ingress/endpoint.ts';
import type { GatewayMiddleware } from '../pipeline/context.ts';

export const PROXY_ROUTE = '/proxy';
/** On the raw request line: the slug, then the rest (path and query) exactly as the caller sent it. */
const PATTERN = /^\/proxy\/([^/?#]+)(\/[^]*)$/;

/** HEAD is served by the GET route (Koa's router) and forwarded as HEAD; OPTIONS is answered by the router. */
const PROXY_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** The same setup for every method of the route: one target table per gateway. */
const tables = new WeakMap<LocalEndpointDeps, Map<string, PassthroughEntry>>();

function decodeSlug(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** Whether the caller sends a body: a non-zero Content-Length, or a chunked one. */
function declaredBody(headers: Record<string, string | string[] | undefined>): { present: boolean; length?: number } {
  const length = headers['content-length'];
  if (typeof length === 'string' && /^\d+$/.test(length)) return { present: Number(length) > 0, length: Number(length) };
  return { present: headers['transfer-encoding'] !== undefined };
}

function passthroughHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  let targets = tables.get(deps);
  if (!targets) tables.set(deps, (targets = passthroughTargets(deps.config, deps.providers)));
  const limitBytes = deps.config.server.proxyBodyLimitBytes;
  const forwarding = forwardingRules(deps.config.server);
  const known = targets;

  return async (ctx) => {
    const gw = ctx.state.gw;
    // The request line itself, not Koa's parsed ctx.path: the rest is joined as the caller encoded it.
    const match = PATTERN.exec(ctx.req.url ?? '');
    const slug = decodeSlug(match?.[1] ?? '');
    const entry = known.get(slug);
    if (!match || !entry) {
      throw new GatewayError('NOT_FOUND', `No provider "${slug}" is configured and enabled for the passthrough`, { provider: slug });
    }
    const target = joinUnderBase(entry.target.baseUrl, match[2]!);
    const upgrade = upgradeOf(ctx.req);
    if (upgrade) {
      if (!isWebSocketUpgrade(ctx.req)) {
        throw new GatewayError('VALIDATION_ERROR', 'The passthrough upgrades GET requests to WebSocket only', [{ path: 'headers.upgrade', message: 'only "websocket" is supported' }]);
      }
      ctx.set('X-Provider', entry.target.slug);
      const headers = withCredential(entry, forwardedHeaders(ctx.req.headers, gw.requestId, forwardingHeaders(ctx.req, forwarding)));
      let status: number;
      try {
        status = await proxyWebSocket(deps, entry, target, headers, ctx.req, upgrade, gw.signal, deps.config.upstream);
      } catch (err) {
        if (!(err instanceof Answered)) throw err;
        status = err.status;
      }
      // The socket belongs to the upstream connection now (or holds its answer): Koa writes nothing more.
      ctx.respond = false;
      ctx.status = status;
      return;
    }
    const body = declaredBody(ctx.req.headers);
    if (body.length !== undefined && body.length > limitBytes) {
      // Refused before a byte is read or sent upstream.
      drainRefused(ctx);
      throw tooLarge(limitBytes, PROXY_ROUTE);
    }
    let limiter: BodyLimit | undefined;
    let clientGone = false;
    if (body.present) {
      limiter = new BodyLimit(limitBytes, PROXY_ROUTE);
      const stream = limiter;
      // Its failures are read from `exceeded` and from undici; one after undici let go must not crash the process.
      stream.on('error', () => {});
      ctx.req.once('error', (err) => {
        clientGone = true;
        stream.destroy(err);
      });
      ctx.req.pipe(limiter);
    }
    ctx.set('X-Provider', entry.target.slug);

    let response;
    try {
      response = await sendPassthrough(deps, entry, {
        method: ctx.method as UpstreamMethod,
        path: upstreamRequestPath(target),
        headers: withCredential(entry, forwardedHeaders(ctx.req.headers, gw.requestId, forwardingHeaders(ctx.req, forwarding))),
        body: limiter ?? null,
        signal: gw.signal,
        callerFault: () => {
          if (limiter?.exceeded) return tooLarge(limitBytes, PROXY_ROUTE);
          if (clientGone || gw.signal.aborted) return new DOMException('The client went away', 'AbortError');
          return undefined;
        },
      });
    } catch (err) {
      if (limiter && !ctx.req.complete) {
        // The rest of the body (over the limit, or for an upstream that never answered) is not worth reading.
        ctx.req.unpipe(limiter);
        limiter.destroy();
        drainRefused(ctx);
      }
      throw err;
    }

    const upstreamBody = response.body;
    // Registered before Koa's own listener: a stream that breaks after the answer started cannot become an
    // error answer any more, so the connection is cut and the caller sees a truncated answer, not a clean end.
    upstreamBody.once('error', () => {
      if (!ctx.res.writableEnded) ctx.req.socket.destroy();
    });
    ctx.status = response.statusCode;
    const headers = answerHeaders(response.headers);
    for (const [name, value] of Object.entries(headers)) ctx.set(name, value);
    ctx.set('X-Provider', entry.target.slug);
    ctx.body = upstreamBody;
    // Koa types a stream as application/octet-stream; the passthrough keeps the upstream's (lack of) type.
    if (headers['content-type'] === undefined) ctx.remove('Content-Type');
  };
}

const anyAnswer: JsonSchema = { description: 'The provider\'s answer, verbatim: any status, content type and body.' };

/** One entry per method; all share the `/proxy` route name, its pipeline and its capability. */
export const proxyEndpoints: readonly LocalEndpoint[] = PROXY_METHODS.map((method): LocalEndpoint => ({
  kind: 'local',
  method,
  path: PROXY_ROUTE,
  routePattern: '/proxy/:provider/*path',
  capability: 'proxy',
  summary: 'Passthrough to a provider\'s native API: forwards the method, path, query and body to the provider\'s base URL with the gateway\'s credential.',
  description: 'Any answer of the provider, error statuses included, is passed through verbatim. The gateway\'s own errors use the canonical envelope: 404 NOT_FOUND for a provider that is not configured and enabled, 400 VALIDATION_ERROR for a path that could leave the provider\'s base path (a backslash, a dot segment in any encoding, NUL), 413 PAYLOAD_TOO_LARGE over server.proxyBodyLimitBytes, 502 UPSTREAM_ERROR when the provider cannot be reached, 503 UPSTREAM_UNAVAILABLE while its circuit breaker is open, 504 UPSTREAM_TIMEOUT. The caller\'s Authorization, x-api-key and Cookie headers are never forwarded. Neither are its Forwarded, X-Forwarded-* and X-Real-IP unless it is a trusted proxy; the gateway sets X-Forwarded-Proto and X-Forwarded-Host, and X-Forwarded-For with server.proxyForwardClientAddress. HEAD is forwarded through the GET route. A GET with Upgrade: websocket is admitted by the same plugins, then upgraded to the provider\'s WebSocket API at the same joined URL.',
  errorEnvelope: 'canonical',
  rawBody: method !== 'GET',
  responses: {
    '200': { description: 'The provider\'s answer with its status, headers and body passed through unchanged and streamed (an upstream error status too). X-Provider names the provider; the provider\'s own X-Request-ID is renamed X-Upstream-Request-ID.', schema: anyAnswer, contentType: '*/*' },
  },
  handler: passthroughHandler,
}));
