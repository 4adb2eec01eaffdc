/**
 * What a passthrough request (HTTP or WebSocket) tells the provider about the hop it came through. A caller's
 * own Forwarded / X-Forwarded-* / X-Real-IP headers are forgeable and describe the hops to the gateway, not to
 * the provider, so none is forwarded as it came:
 *
 * - From a peer that is not a trusted proxy (server.trustProxy off, or the peer outside server.trustedProxies)
 *   all of them are dropped.
 * - From a trusted proxy, its X-Forwarded-* are kept (the scheme and host it received are the true ones), but
 *   X-Forwarded-For is rebuilt from the hops the gateway believes (core/identity/addresses.ts): forged entries
 *   left of the resolved client are cut off.
 * - Forwarded (RFC 7239) and X-Real-IP are always dropped: the gateway resolves the client from X-Forwarded-For
 *   only, so it cannot vouch for their addresses, and X-Forwarded-* carry the same facts.
 *
 * The gateway then sets X-Forwarded-Proto and X-Forwarded-Host (unless a trusted proxy set them), and, when
 * server.proxyForwardClientAddress is on, X-Forwarded-For: the resolved client, the trusted proxies after it,
 * and the gateway's socket peer, as each proxy appends the address it received the request from.
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { ServerConfig } from '../config/types.ts';
import { compileAddressList, normalizedAddress, verifiedChain, type ProxyTrust } from '../identity/addresses.ts';

export interface ForwardingRules {
  trust: ProxyTrust;
  /** server.proxyForwardClientAddress. */
  sendClientAddress: boolean;
}

/** Compiled once per gateway, like the resolver of gw.clientIp. */
export function forwardingRules(server: ServerConfig): ForwardingRules {
  return {
    trust: { trustProxy: server.trustProxy, isTrustedProxy: compileAddressList(server.trustedProxies) },
    sendClientAddress: server.proxyForwardClientAddress,
  };
}

/** Request headers that speak of the hops before the gateway: none passes as the caller sent it. */
export function isForwardingHeader(name: string): boolean {
  return name === 'forwarded' || name === 'x-real-ip' || name.startsWith('x-forwarded-');
}

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value.join(', ') : value);

/** The forwarding headers to send upstream in place of the caller's (lower-case names). */
export function forwardingHeaders(req: IncomingMessage, rules: ForwardingRules): Record<string, string> {
  const peer = req.socket.remoteAddress ?? '';
  const fromTrustedProxy = rules.trust.trustProxy && rules.trust.isTrustedProxy(normalizedAddress(peer));
  const headers: Record<string, string> = {};
  if (fromTrustedProxy) {
    for (const [name, value] of Object.entries(req.headers)) {
      if (name.startsWith('x-forwarded-') && name !== 'x-forwarded-for' && value !== undefined) headers[name] = single(value)!;
    }
  }
  if (rules.sendClientAddress) {
    headers['x-forwarded-for'] = verifiedChain(peer, single(req.headers['x-forwarded-for']), rules.trust).join(', ');
  }
  headers['x-forwarded-proto'] ??= (req.socket as Partial<TLSSocket>).encrypted ? 'https' : 'http';
  const host = req.headers.host;
  if (host !== undefined && headers['x-forwarded-host'] === undefined) headers['x-forwarded-host'] = host;
  return headers;
}
