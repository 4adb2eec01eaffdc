/**
 * The addresses a caller-chosen URL may not reach unless the operator allow-lists them: everything that is not
 * a public unicast host. Matching goes through core/identity/addresses.ts, so IPv4-mapped IPv6
 * (::ffff:10.0.0.1) is checked as its IPv4 host and a malformed address is never mistaken for a public one.
 */
import { compileAddressList, parseAddress } from '../identity/addresses.ts';

/** Each forbidden range and why; the docs (files-and-batches.md, Webhooks) list the same. */
export const FORBIDDEN_RANGES: ReadonlyArray<readonly [range: string, why: string]> = [
  ['0.0.0.0/8', 'unspecified ("this network")'],
  ['10.0.0.0/8', 'private (RFC 1918)'],
  ['100.64.0.0/10', 'carrier-grade NAT (RFC 6598)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local, cloud metadata services'],
  ['172.16.0.0/12', 'private (RFC 1918)'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.168.0.0/16', 'private (RFC 1918)'],
  ['198.18.0.0/15', 'benchmarking networks'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved, broadcast'],
  // ::/96 holds the unspecified address, loopback and the deprecated IPv4-compatible form (::a.b.c.d).
  ['::/96', 'unspecified, loopback, IPv4-compatible'],
  ['fc00::/7', 'unique local (private)'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local (deprecated)'],
  ['ff00::/8', 'multicast'],
];

const forbidden = compileAddressList(FORBIDDEN_RANGES.map(([range]) => range));

/**
 * Prefixes that carry an IPv4 address inside an IPv6 one and route to it: NAT64 (64:ff9b::/96, the IPv4
 * host in the last 32 bits) and 6to4 (2002::/16, in bits 16-48). The embedded host is checked instead, so
 * a public IPv4 receiver stays reachable through them and a private one does not.
 */
function embeddedIPv4(text: string): string | null {
  const address = parseAddress(text);
  if (!address || address.kind() !== 'ipv6') return null;
  const parts = (address as { parts: number[] }).parts;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  if (parts[0] === 0x64 && parts[1] === 0xff9b && parts.slice(2, 6).every((p) => p === 0)) return v4(parts[6]!, parts[7]!);
  if (parts[0] === 0x2002) return v4(parts[1]!, parts[2]!);
  return null;
}

/** True for an address in a forbidden range, through NAT64 or 6to4 too, and for text that is not an address. */
export function isForbiddenAddress(text: string): boolean {
  if (!parseAddress(text)) return true;
  const inner = embeddedIPv4(text);
  return forbidden(text) || (inner !== null && forbidden(inner));
}
