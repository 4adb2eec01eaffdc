/**
 * Client addresses and address allow-lists (spec: Authentication, item 5). Parsing is strict and goes
 * through ipaddr.js; anything it would read leniently is refused, because an allow-list must never match
 * more than its author wrote.
 *
 * - IPv4 is four decimal octets only: "10.1", "010.0.0.1" (octal to some tools) and "0x0a.0.0.1" are malformed.
 * - An IPv4 part embedded in IPv6 ("::ffff:1.2.3.4") follows the same rule.
 * - An IPv6 zone id ("fe80::1%eth0") is dropped: it names the local interface, not the host, and
 *   allow-lists cannot express it. An IPv4 address with a zone is malformed.
 * - IPv4-mapped IPv6 (::ffff:a.b.c.d) is its IPv4 host, for clients and for list entries alike.
 * - A CIDR entry whose address has host bits set (10.1.2.3/8) means its network (10.0.0.0/8), like most tools.
 * - Surrounding whitespace is not trimmed: " 10.0.0.1" is malformed.
 */
import ipaddr from 'ipaddr.js';

export type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** [address, prefix length], the form ipaddr's match() takes. */
type Range = [Address, number];

const ZONE_ID = /^[0-9A-Za-z._~-]+$/;
const PREFIX = /^(?:0|[1-9]\d{0,2})$/;

/** The address as written, mapped IPv6 kept as IPv6 (a CIDR over it needs the 128-bit form). */
function parseRaw(text: string): Address | null {
  if (!text.includes(':')) return ipaddr.IPv4.isValidFourPartDecimal(text) ? ipaddr.IPv4.parse(text) : null;
  const percent = text.indexOf('%');
  const body = percent === -1 ? text : text.slice(0, percent);
  if (percent !== -1 && !ZONE_ID.test(text.slice(percent + 1))) return null;
  const lastColon = body.lastIndexOf(':');
  const tail = body.slice(lastColon + 1);
  const embedsV4 = tail.includes('.');
  if (embedsV4 && !ipaddr.IPv4.isValidFourPartDecimal(tail)) return null;
  if (!ipaddr.IPv6.isValid(body)) return null;
  // ipaddr reads the deprecated IPv4-compatible form "::a.b.c.d" as mapped (::ffff:a.b.c.d); it is not.
  if (embedsV4 && body.startsWith('::') && lastColon === 1) {
    const [a, b, c, d] = ipaddr.IPv4.parse(tail).octets as [number, number, number, number];
    return new ipaddr.IPv6([0, 0, 0, 0, 0, 0, (a << 8) | b, (c << 8) | d]);
  }
  return ipaddr.IPv6.parse(body);
}

function unmap(address: Address): Address {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address;
}

/**
 * Texts parsed lately, and what they gave: every request parses its peer's address (and ip-allow matches it), and
 * most come from few addresses. Cleared whole when full, so forged X-Forwarded-For hops cannot grow it.
 */
const PARSED_KEPT = 4096;
const parsed = new Map<string, { address: Address | null; canonical: string }>();

function parsedText(text: string): { address: Address | null; canonical: string } {
  let known = parsed.get(text);
  if (!known) {
    const raw = parseRaw(text);
    const address = raw && unmap(raw);
    known = { address, canonical: address?.toString() ?? text };
    if (parsed.size >= PARSED_KEPT) parsed.clear();
    parsed.set(text, known);
  }
  return known;
}

/**
 * A single address, or null when malformed. IPv4-mapped IPv6 comes back as its IPv4 host. The object may be shared
 * with other callers of the same text: read it, never change it.
 */
export function parseAddress(text: string): Address | null {
  return parsedText(text).address;
}

/** A single address (a full-length range) or a CIDR range; null when malformed. */
export function parseRange(text: string): Range | null {
  const slash = text.lastIndexOf('/');
  if (slash === -1) {
    const address = parseAddress(text);
    return address && [address, address.kind() === 'ipv4' ? 32 : 128];
  }
  const prefixText = text.slice(slash + 1);
  const raw = parseRaw(text.slice(0, slash));
  if (!raw || !PREFIX.test(prefixText)) return null;
  const prefix = Number(prefixText);
  if (prefix > (raw.kind() === 'ipv4' ? 32 : 128)) return null;
  // A range inside ::ffff:0:0/96 is an IPv4 range; a wider one stays IPv6 and never meets an IPv4 client.
  const mapped = unmap(raw);
  if (mapped !== raw && prefix >= 96) return [mapped, prefix - 96];
  return [raw, prefix];
}

/**
 * The matcher of an allow-list, parsed once. A malformed entry matches nothing and is never dropped in a
 * way that widens the list: a list of malformed entries only matches nothing at all. An empty list matches
 * nothing too; "empty means unrestricted" is the caller's rule, not this function's.
 */
export function compileAddressList(entries: readonly string[]): (address: string) => boolean {
  const v4: Range[] = [];
  const v6: Range[] = [];
  for (const entry of entries) {
    const range = parseRange(entry);
    if (range) (range[0].kind() === 'ipv4' ? v4 : v6).push(range);
  }
  return (text) => {
    const address = parseAddress(text);
    if (!address) return false;
    // Families never cross: match() would throw on a mixed pair, and a v4 client is never inside ::/0.
    const ranges = address.kind() === 'ipv4' ? v4 : v6;
    return ranges.some((range) => address.match(range));
  };
}

/** The address in its canonical text (IPv4-mapped IPv6 as IPv4), or as written when malformed. */
export function normalizedAddress(text: string): string {
  return parsedText(text).canonical;
}

const normalized = normalizedAddress;

export interface ProxyTrust {
  trustProxy: boolean;
  isTrustedProxy: (address: string) => boolean;
}

/**
 * The address the gateway should check. Without trustProxy: the socket peer. With it, the chain
 * X-Forwarded-For + peer is walked from the right and the first hop that is not a trusted proxy is the
 * client: everything left of it was written by that untrusted party and may be forged. When every hop is
 * trusted, the leftmost is the client. A malformed hop is untrusted and is returned as written, so it
 * matches no allow-list entry.
 */
export function clientAddress(peer: string, forwardedFor: string | undefined, trust: ProxyTrust): string {
  return verifiedChain(peer, forwardedFor, trust)[0]!;
}

/**
 * The hops clientAddress() believes, left to right: the client, the trusted proxies after it, the socket peer
 * last. What the caller wrote left of the client is not in it. Without trustProxy or a trusted peer: the peer alone.
 */
export function verifiedChain(peer: string, forwardedFor: string | undefined, trust: ProxyTrust): string[] {
  const client = normalized(peer);
  if (!trust.trustProxy || !forwardedFor?.trim() || !trust.isTrustedProxy(client)) return [client];
  const hops = forwardedFor.split(',').map((hop) => hop.trim());
  const chain = [client];
  for (let i = hops.length - 1; i >= 0; i--) {
    const text = hops[i]!;
    const hop = normalized(text);
    chain.unshift(hop);
    if (!parseAddress(text) || !trust.isTrustedProxy(hop)) break;
  }
  return chain;
}
