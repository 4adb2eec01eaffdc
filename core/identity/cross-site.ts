/**
 * Cross-site request forgery: a browser attaches the access_token cookie to requests that other sites make it
 * send (a form post, a no-cors fetch). A state-changing request authenticated by that cookie must therefore
 * show that it comes from a page of the gateway's own origin, and carry a JSON content type, which no form can
 * send and which makes a browser ask (CORS preflight) before any cross-origin fetch. Bearer credentials are
 * never attached by a browser on its own, so requests carrying them are not checked.
 */
import type { Context } from 'koa';
import { GatewayError } from '../errors.ts';

/** Methods that change nothing: a cross-site read cannot see the answer, CORS keeps it from the other site. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Throws 403 AUTH_FORBIDDEN unless a cookie-authenticated request is safe or same-origin JSON. */
export function refuseCrossSiteCookieWrite(ctx: Context): void {
  if (SAFE_METHODS.has(ctx.method)) return;
  if (!fromSameOrigin(ctx)) {
    throw new GatewayError('AUTH_FORBIDDEN',
      'A state-changing request authenticated by the access_token cookie must come from the gateway\'s own origin '
      + '(a same-origin Origin header, or Sec-Fetch-Site: same-origin); other clients send Authorization: Bearer',
      { reason: 'cross_site_request' });
  }
  if (!isJsonType(ctx.get('content-type'))) {
    throw new GatewayError('AUTH_FORBIDDEN',
      'A state-changing request authenticated by the access_token cookie must be sent with Content-Type: application/json',
      { reason: 'cookie_write_not_json' });
  }
}

/**
 * Sec-Fetch-Site, when the browser sends it, is the browser's own verdict and decides. Otherwise the Origin's
 * host and port must be the Host the request was sent to. The Host header is taken as it arrives: the gateway
 * trusts no X-Forwarded-Host, so a proxy that rewrites Host needs browsers that send Sec-Fetch-Site (all
 * current ones do). No evidence at all is a refusal.
 */
function fromSameOrigin(ctx: Context): boolean {
  const site = ctx.get('sec-fetch-site');
  if (site) return site === 'same-origin';
  const origin = ctx.get('origin');
  const host = ctx.req.headers.host;
  if (!origin || !host) return false;
  try {
    const from = new URL(origin);
    if (from.protocol !== 'http:' && from.protocol !== 'https:') return false;
    // The Host header may spell out the default port of the Origin's scheme; URL drops it on both sides.
    return from.host === new URL(`${from.protocol}//${host}`).host;
  } catch {
    return false; // "null" (sandboxed frames, some redirects) and anything unparsable
  }
}

function isJsonType(contentType: string): boolean {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || /^[a-z0-9!#$&^_.-]+\/[a-z0-9!#$&^_.-]+\+json$/.test(type);
}
