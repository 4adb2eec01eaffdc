/**
 * The delivery-time half of the outbound guard: one request to a caller-chosen URL. The host is resolved here,
 * every address it resolves to is checked, and the connection is pinned to the checked address, so a DNS
 * answer that changes between the check and the connect (rebinding) cannot move it. Redirects are answers,
 * never followed; connect, headers and body each have a deadline, and what the receiver sends back is read
 * up to a cap and thrown away.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { parseAddress } from '../identity/addresses.ts';
import { addressPermitted, bareHost, checkUrl, OutboundRefusedError, type OutboundPolicy } from './policy.ts';

export interface ResolvedAddress { address: string; family: 4 | 6 }
/** All the addresses a host name resolves to (dns.lookup with `all`); tests inject their own. */
export type ResolveAll = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolve: ResolveAll = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));

export interface OutboundRequest {
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string;
  /** Deadline of the whole exchange, from resolving the host to the last response byte read. */
  timeoutMs: number;
  /** Most response body bytes read; the rest is not waited for. */
  maxResponseBytes?: number;
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  /** The address the request went to. */
  address: string;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;

/** The host did not resolve, or not in time: nothing was sent. Not a refusal: the same URL may work later. */
export class ResolveError extends Error {
  override name = 'ResolveError';
}

/** The URL's address: an IP literal as written, otherwise the first of its resolved addresses, all of them checked. */
async function resolveChecked(url: URL, policy: OutboundPolicy, resolve: ResolveAll, timeoutMs: number): Promise<ResolvedAddress> {
  const host = bareHost(url);
  const literal = parseAddress(host);
  if (literal) return { address: literal.toString(), family: literal.kind() === 'ipv6' ? 6 : 4 };
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ResolveError(`resolving ${host} took longer than ${timeoutMs} ms`)), timeoutMs);
  });
  let addresses: ResolvedAddress[];
  try {
    addresses = await Promise.race([resolve(host), deadline]);
  } catch (err) {
    if (err instanceof ResolveError) throw err;
    throw new ResolveError(`${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'lookup failed'})`);
  } finally {
    clearTimeout(timer);
  }
  if (addresses.length === 0) throw new ResolveError(`${host} does not resolve`);
  // One forbidden answer refuses the host: a name that mixes public and private addresses is not trusted
  // to keep choosing the public one.
  const refused = addresses.find(({ address }) => !addressPermitted(address, host, policy));
  if (refused) throw new OutboundRefusedError(`${host} resolves to ${refused.address}, which is private, loopback, link-local or otherwise not public`);
  return addresses[0]!;
}

/** A lookup that answers every question with the one checked address. */
function pinnedLookup(pinned: ResolvedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    const cb = callback as (err: Error | null, address: string | ResolvedAddress[], family?: number) => void;
    if ((options as { all?: boolean }).all) cb(null, [pinned]);
    else cb(null, pinned.address, pinned.family);
  };
}

/**
 * Sends one request after checking the URL (checkUrl) and the addresses its host resolves to. Throws
 * OutboundRefusedError when the policy forbids it and ResolveError when the host does not resolve (nothing is
 * sent either way), and the network error or timeout of a request that was attempted; any HTTP answer, a 3xx
 * included, is returned.
 */
export async function outboundFetch(
  urlText: string, init: OutboundRequest, policy: OutboundPolicy, resolve: ResolveAll = systemResolve,
): Promise<OutboundResponse> {
  const url = checkUrl(urlText, policy);
  const started = Date.now();
  const pinned = await resolveChecked(url, policy, resolve, init.timeoutMs);
  const left = Math.max(1, init.timeoutMs - (Date.now() - started));
  const deadline = AbortSignal.timeout(left);
  const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
  const agent = new Agent({
    connect: { timeout: left, lookup: pinnedLookup(pinned) },
    headersTimeout: left,
    bodyTimeout: left,
    // One request per agent: nothing is kept alive, no connection outlives this call.
    pipelining: 0,
    connections: 1,
  });
  try {
    const response = await request(url, {
      method: init.method,
      headers: init.headers,
      body: init.body ?? null,
      dispatcher: agent,
      signal,
    });
    await drain(response.body, init.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES);
    return { status: response.statusCode, address: pinned.address };
  } finally {
    await agent.destroy().catch(() => undefined);
  }
}

/** Reads and discards up to `max` bytes, then stops reading: a receiver that streams forever is not waited for. */
async function drain(body: AsyncIterable<Buffer> & { destroy(): void }, max: number): Promise<void> {
  let read = 0;
  try {
    for await (const chunk of body) {
      read += chunk.length;
      if (read >= max) break;
    }
  } catch {
    // The status is the answer; a body cut short or too slow changes nothing about it.
  } finally {
    body.destroy();
  }
}
