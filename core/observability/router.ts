/**
 * GET /metrics. A scraper on the gateway's own host (the socket's peer is a loopback address; X-Forwarded-For is
 * never read, as any client can write it) is served as it is; any other must send server.metrics.token as a
 * Bearer token, compared in constant time. Without a configured token, only loopback scrapers are served.
 */
import Router from '@koa/router';
import type { MetricsConfig } from '../config/types.ts';
import { GatewayError } from '../errors.ts';
import { parseAddress } from '../identity/addresses.ts';
import { bearerToken, matchesSecret, secretDigest } from '../identity/bearer.ts';
import type { GatewayMetrics } from './metrics.ts';

/** 127.0.0.0/8, ::1, and their IPv4-mapped form (::ffff:127.x.y.z), read by the allow-lists' address parser. */
export function isLoopbackAddress(address: string | undefined): boolean {
  return address ? parseAddress(address)?.range() === 'loopback' : false;
}

/** Throws the refusal a non-loopback scraper gets, or returns when it may read. */
export function metricsAccess(config: MetricsConfig): (remoteAddress: string | undefined, authorization: string) => void {
  const token = config.token === undefined ? undefined : secretDigest(config.token);
  return (remoteAddress, authorization) => {
    if (isLoopbackAddress(remoteAddress)) return;
    if (!token) throw new GatewayError('AUTH_FORBIDDEN', 'Metrics are served to loopback scrapers only: set server.metrics.token to let others in with it');
    const bearer = bearerToken(authorization);
    if (bearer === undefined) throw new GatewayError('AUTH_REQUIRED', 'Authentication required: send Authorization: Bearer <server.metrics.token>');
    if (!matchesSecret(bearer, token)) throw new GatewayError('AUTH_INVALID_TOKEN', 'The bearer token is not the metrics token');
  };
}

export function metricsRouter(config: MetricsConfig, metrics: GatewayMetrics): Router {
  const router = new Router();
  const allow = metricsAccess(config);
  router.get('/metrics', async (ctx) => {
    allow(ctx.req.socket.remoteAddress, ctx.get('authorization'));
    ctx.set('Content-Type', metrics.registry.contentType);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await metrics.metrics();
  });
  return router;
}
