/**
 * The operator's rules for URLs the gateway calls on a caller's behalf (config section `outbound`), and the
 * submit-time check of such a URL. The delivery-time half, which resolves the host, is fetch.ts.
 */
import { compileAddressList, parseAddress, parseRange } from '../identity/addresses.ts';
import type { OutboundConfig } from '../config/types.ts';
import { isForbiddenAddress } from './ranges.ts';

export interface OutboundPolicy {
  allowHttp: boolean;
  /** An allow-listed address (or one inside an allow-listed range) may be reached whatever its range. */
  isAllowedAddress(address: string): boolean;
  /** An allow-listed host name may resolve to any address. */
  isAllowedHost(hostname: string): boolean;
}

/** A DNS name: dot-separated labels of letters, digits and inner hyphens, an optional final dot. */
const HOST_NAME = /^(?=.{1,253}\.?$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;

/** What an allow-list entry is: an address or CIDR range, a host name, or neither (a boot error). */
export function allowListEntryKind(entry: string): 'range' | 'host' | null {
  if (parseRange(entry)) return 'range';
  // A dotted-quad that failed to parse as an address ("10.0.0.256", "010.0.0.1") is a mistake, not a host.
  if (/^[\d.]+$/.test(entry) || entry.includes(':') || entry.includes('/')) return null;
  return HOST_NAME.test(entry) ? 'host' : null;
}

const hostKey = (hostname: string) => hostname.toLowerCase().replace(/\.$/, '');

export function compileOutboundPolicy(config: OutboundConfig): OutboundPolicy {
  const ranges = config.allowedAddresses.filter((entry) => allowListEntryKind(entry) === 'range');
  const hosts = new Set(config.allowedAddresses.filter((entry) => allowListEntryKind(entry) === 'host').map(hostKey));
  const inRanges = compileAddressList(ranges);
  return {
    allowHttp: config.allowHttp,
    isAllowedAddress: inRanges,
    isAllowedHost: (hostname) => hosts.has(hostKey(hostname)),
  };
}

/** Why a URL may not be called. `reason` is safe to show the caller and to log: it never holds the URL's credentials. */
export class OutboundRefusedError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'OutboundRefusedError';
  }
}

/** The URL's host without IPv6 brackets. */
export function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** May the gateway connect to this address for this URL host? */
export function addressPermitted(address: string, hostname: string, policy: OutboundPolicy): boolean {
  return !isForbiddenAddress(address) || policy.isAllowedAddress(address) || policy.isAllowedHost(hostname);
}

/**
 * The submit-time check: a parseable absolute URL, https (http only with allowHttp), no user or password in
 * it, and, when the host is an IP literal, an address the policy permits. A host name passes here; it is
 * resolved and checked at every delivery (fetch.ts), since what it resolves to may change.
 */
export function checkUrl(text: string, policy: OutboundPolicy): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new OutboundRefusedError('not an absolute URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw new OutboundRefusedError(policy.allowHttp ? 'the scheme must be https or http' : 'the scheme must be https');
  }
  if (url.username || url.password) throw new OutboundRefusedError('the URL must not carry a user name or password');
  const host = bareHost(url);
  if (!host) throw new OutboundRefusedError('the URL has no host');
  if (parseAddress(host) && !addressPermitted(host, host, policy)) {
    throw new OutboundRefusedError(`the address ${host} is private, loopback, link-local or otherwise not public`);
  }
  return url;
}
