/**
 * The passthrough's upstream half (/proxy/<provider>/..., served by core/api/proxy.ts): a caller's native
 * request re-addressed to the provider's base URL, stripped of the caller's credentials and of hop-by-hop
 * headers, given the gateway's credential, and sent through the upstream's breaker with its body streaming as
 * it arrives. The answer comes back unread, for the caller to receive as it streams.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Transform, type TransformCallback, type Readable } from 'node:stream';
import type { GatewayConfig } from '../config/types.ts';
import { GatewayError } from '../errors.ts';
import { fillBaseUrl } from './base-url.ts';
import { isForwardingHeader } from './passthrough-forwarded.ts';
import type { UpstreamTarget } from './passthrough-path.ts';
import type { Breakers } from './breakers.ts';
import type { ProviderDefinition, ProviderIO, ProviderTarget, UpstreamMethod, UpstreamRequest } from './provider.ts';
import type { ProviderRegistry } from './provider-registry.ts';
import type { UpstreamClient, UpstreamResponse } from './upstream.ts';
import { countsAgainstUpstream, isAbort, transportError } from './upstream-errors.ts';

export interface PassthroughEntry {
  provider: ProviderDefinition;
  target: ProviderTarget;
}

/** Headers that describe one connection, not the message (RFC 9110 7.6.1), plus the ones undici sets itself. */
const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer',
  'transfer-encoding', 'upgrade', 'host', 'expect', 'http2-settings',
]);

/** The caller's credentials for the gateway: never sent to a provider. */
export const CALLER_CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'cookie'] as const;

/**
 * Every provider block the operator wrote, by slug: what /proxy/<slug>/ may reach, when enabled and with a base
 * URL. Registered providers without a block stay unreachable: the gateway is no open relay to every public
 * provider API it knows.
 */
export function passthroughTargets(config: GatewayConfig, providers: ProviderRegistry): Map<string, PassthroughEntry> {
  const entries = new Map<string, PassthroughEntry>();
  for (const [slug, block] of Object.entries(config.providers)) {
    const provider = providers.get(slug);
    if (!provider || !block.enabled) continue;
    const baseUrl = block.baseUrl ?? fillBaseUrl(provider.defaultBaseUrl, block.options);
    if (!baseUrl) continue;
    const target: ProviderTarget = { slug, baseUrl, headers: block.headers ?? {}, options: block.options ?? {}, upstreamModel: '' };
    if (block.apiKey) target.apiKey = block.apiKey;
    entries.set(slug, { provider, target });
  }
  return entries;
}

/** Names listed in Connection are hop-by-hop for this message too. */
function connectionNamed(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Set<string> {
  const value = headers.connection;
  const text = Array.isArray(value) ? value.join(',') : value ?? '';
  return new Set(text.split(',').map((name) => name.trim().toLowerCase()).filter(Boolean));
}

/**
 * The caller's headers minus hop-by-hop ones, its credentials and its forwarding headers, then the gateway's
 * forwarding headers (forwardingHeaders() in passthrough-forwarded.ts) and its request id.
 */
export function forwardedHeaders(incoming: IncomingHttpHeaders, requestId: string, forwarding: Record<string, string>): Record<string, string> {
  const named = connectionNamed(incoming);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name) || isForwardingHeader(name)) continue;
    if ((CALLER_CREDENTIAL_HEADERS as readonly string[]).includes(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  Object.assign(headers, forwarding);
  headers['x-request-id'] = requestId;
  return headers;
}

/**
 * The credential headers (provider.passthroughHeaders, else Bearer unless `authorize` supplies the
 * credential) over the configured provider headers over the caller's: the operator's and the credential win.
 */
export function withCredential(entry: PassthroughEntry, headers: Record<string, string>): Record<string, string> {
  const { provider, target } = entry;
  const credential = provider.passthroughHeaders
    ? provider.passthroughHeaders(target)
    : provider.authorize || !target.apiKey ? {} : { authorization: `Bearer ${target.apiKey}` };
  const merged = { ...headers };
  for (const [name, value] of [...Object.entries(target.headers), ...Object.entries(credential)]) {
    // A translator's header builder sets its own JSON content type; a passthrough body keeps the caller's.
    if (name.toLowerCase() !== 'content-type') merged[name.toLowerCase()] = value;
  }
  return merged;
}

/**
 * What goes upstream as UpstreamRequest.path: the joined path relative to the base URL, or with a base URL that
 * has a query of its own, the absolute URL (the upstream client sends an absolute URL's path as it is).
 */
export function upstreamRequestPath(target: UpstreamTarget): string {
  return target.relative ?? `${target.origin}${target.path}`;
}

/** The answer's headers minus hop-by-hop ones; the provider's request id moves to X-Upstream-Request-ID. */
export function answerHeaders(upstream: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const named = connectionNamed(upstream);
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(upstream)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
    headers[name === 'x-request-id' ? 'x-upstream-request-id' : name] = value;
  }
  return headers;
}

/** Counts bytes as they pass and fails with PAYLOAD_TOO_LARGE once they cross the limit; holds nothing. */
export class BodyLimit extends Transform {
  exceeded = false;
  private seen = 0;

  constructor(private readonly limitBytes: number, private readonly route: string) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.limitBytes) {
      this.exceeded = true;
      callback(tooLarge(this.limitBytes, this.route));
      return;
    }
    callback(null, chunk);
  }
}

export const tooLarge = (limitBytes: number, route: string) =>
  new GatewayError('PAYLOAD_TOO_LARGE', `Request body exceeds the limit of ${limitBytes} bytes for ${route}`, { limitBytes });

/** An answer the breaker counts as a failure (5xx, 408, 429) that the caller still receives verbatim. */
class CountedAnswer extends Error {
  constructor(readonly response: UpstreamResponse) {
    super(`upstream answered ${response.statusCode}`);
  }
}

/** A status the breaker counts, by the rule translated calls follow (core/dispatch/upstream-errors.ts). */
export const countsAsFailure = (status: number) => countsAgainstUpstream(new GatewayError('UPSTREAM_ERROR', '', { upstreamStatus: status }));

export interface PassthroughDeps {
  upstream: UpstreamClient;
  breakers: Breakers;
  io: ProviderIO;
}

export interface PassthroughCall {
  method: UpstreamMethod;
  /** From upstreamRequestPath(). */
  path: string;
  headers: Record<string, string>;
  /** The caller's body as it arrives, or null. */
  body: Readable | null;
  signal: AbortSignal;
  /** A failure that is the caller's (body too large, client gone): thrown as is, never counted. */
  callerFault(): Error | undefined;
}

/**
 * Authorizes and sends, inside the upstream's breaker; resolves with the answer once its headers arrive, body
 * unread, whatever its status. Throws UPSTREAM_UNAVAILABLE (breaker open), UPSTREAM_ERROR / UPSTREAM_TIMEOUT
 * (unreachable), or the caller's fault.
 */
export async function sendPassthrough(deps: PassthroughDeps, entry: PassthroughEntry, call: PassthroughCall): Promise<UpstreamResponse> {
  const { provider, target } = entry;
  const request: UpstreamRequest = { method: call.method, path: call.path, headers: call.headers, ...(call.body ? { bodyStreamed: true } : {}) };
  try {
    return await deps.breakers.run(target.slug, target.baseUrl, async () => {
      let response: UpstreamResponse;
      try {
        const authorized = provider.authorize ? await provider.authorize(request, target, deps.io, call.signal) : request;
        response = await deps.upstream.send(target.baseUrl, authorized, call.signal, call.body ?? undefined);
      } catch (err) {
        const fault = call.callerFault();
        if (fault) throw fault;
        throw isAbort(err) ? err : transportError(target.slug, err, 'request');
      }
      if (countsAsFailure(response.statusCode)) throw new CountedAnswer(response);
      return response;
    });
  } catch (err) {
    if (err instanceof CountedAnswer) return err.response;
    throw err;
  }
}
