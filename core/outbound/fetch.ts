/**
 * The delivery-time half of the outbound guard: one request to a caller-chosen URL. The host is resolved here,
 * every address it resolves to is checked, and the connection is pinned to the checked address, so a DNS
 * answer that changes between the check and the connect (rebinding) cannot move it. Redirects are answers,
 * never followed here; connect, headers and body each have a deadline. outboundFetch reads what the receiver
 * sends back up to a cap and throws it away; get.ts keeps it, and follows redirects through the same guard.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import { parseAddress } from '../identity/addresses.ts';
import { addressPermitted, bareHost, checkUrl, OutboundRefusedError, type OutboundPolicy } from './policy.ts';

export interface ResolvedAddress { address: string; family: 4 | 6 }
/** All the addresses a host name resolves to (dns.lookup with `all`); tests inject their own. */
export type ResolveAll = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolve: ResolveAll = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));

/** What a request sends, and the deadline of the whole exchange. */
export interface ExchangeRequest {
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string;
  /** Deadline of the whole exchange, from resolving the host to the last response byte read. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface OutboundRequest extends ExchangeRequest {
  /** Most response body bytes read; the rest is not waited for. */
  maxResponseBytes?: number;
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

/** An answer's status line and headers, and its body, which is only readable inside the exchange. */
export type ExchangeResponse = Dispatcher.ResponseData;

/**
 * One request after checking the URL (checkUrl) and every address its host resolves to, on a connection pinned
 * to the checked address and torn down when `use` returns: `use` reads what it needs of the answer. Throws
 * OutboundRefusedError when the policy forbids the URL and ResolveError when the host does not resolve (nothing
 * is sent either way), and the network error or timeout of a request that was attempted. Redirects are answers.
 */
export async function pinnedExchange<T>(
  urlText: string, init: ExchangeRequest, policy: OutboundPolicy, resolve: ResolveAll,
  use: (response: ExchangeResponse, pinned: ResolvedAddress) => Promise<T>,
): Promise<T> {
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
    try {
      return await use(response, pinned);
    } finally {
      // What `use` left unread is dropped; destroying an unread body reports an abort nobody needs to hear.
      response.body.on('error', () => undefined).destroy();
    }
  } finally {
    await agent.destroy().catch(() => undefined);
  }
}

/**
 * Sends one request through pinnedExchange; any HTTP answer, a 3xx included, is returned, its body read up to
 * maxResponseBytes and discarded.
 */
export async function outboundFetch(
  urlText: string, init: OutboundRequest, policy: OutboundPolicy, resolve: ResolveAll = systemResolve,
): Promise<OutboundResponse> {
  return pinnedExchange(urlText, init, policy, resolve, async (response, pinned) => {
    await drain(response.body, init.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES);
    return { status: response.statusCode, address: pinned.address };
  });
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
