/**
 * Audio `file_url`: fetched by the gateway at parse time through the outbound guard (core/outbound/get.ts), with
 * the operator's `outbound` rules: no private, loopback or link-local address unless allow-listed, every
 * redirect checked again, at most the endpoint's 10 MB and AUDIO_URL_TIMEOUT_MS. Every failure is the caller's
 * URL, so it is a 4xx naming why, never the URL's path or query (they may carry tokens).
 */
import type { AudioInput } from '../canonical/audio.ts';
import type { OutboundConfig } from '../config/types.ts';
import { GatewayError, validationError } from '../errors.ts';
import { ResolveError, systemResolve, type ResolveAll } from '../outbound/fetch.ts';
import { OutboundTimeoutError, outboundGet, ResponseTooLargeError, TooManyRedirectsError, UnexpectedStatusError } from '../outbound/get.ts';
import { compileOutboundPolicy, OutboundRefusedError, type OutboundPolicy } from '../outbound/policy.ts';
import { audioFromUrl } from './audio-input.ts';
import { AUDIO_BODY_LIMIT } from './schemas/audio.ts';

/**
 * The whole fetch, redirects included. Long enough for 10 MB from a slow object store, short enough that a URL
 * that trickles bytes cannot hold a request (and its connection slot) for minutes.
 */
export const AUDIO_URL_TIMEOUT_MS = 30_000;
export const AUDIO_URL_MAX_REDIRECTS = 3;

/** One compiled policy per loaded configuration. */
const policies = new WeakMap<OutboundConfig, OutboundPolicy>();
function policyOf(config: OutboundConfig): OutboundPolicy {
  let policy = policies.get(config);
  if (!policy) policies.set(config, (policy = compileOutboundPolicy(config)));
  return policy;
}

const refused = (message: string) => validationError([{ path: '/file_url', message }]);

/** The audio at `url`, named from its path's extension, its Content-Type or its bytes. */
export async function audioFromFileUrl(
  url: string, outbound: OutboundConfig, signal?: AbortSignal, resolve: ResolveAll = systemResolve,
): Promise<AudioInput> {
  try {
    const body = await outboundGet(url, {
      maxBytes: AUDIO_BODY_LIMIT, timeoutMs: AUDIO_URL_TIMEOUT_MS, maxRedirects: AUDIO_URL_MAX_REDIRECTS, headers: { accept: 'audio/*, */*' },
      ...(signal ? { signal } : {}),
    }, policyOf(outbound), resolve);
    return audioFromUrl(body.bytes, body.url, body.contentType);
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    if (err instanceof ResponseTooLargeError) {
      throw new GatewayError('PAYLOAD_TOO_LARGE', `The audio at file_url is larger than ${AUDIO_BODY_LIMIT} bytes`, { field: 'file_url', limitBytes: AUDIO_BODY_LIMIT });
    }
    if (err instanceof OutboundRefusedError) throw refused(`refused: ${err.reason}`);
    if (err instanceof UnexpectedStatusError || err instanceof TooManyRedirectsError || err instanceof ResolveError || err instanceof OutboundTimeoutError) {
      throw refused(`could not be fetched: ${err.message}`);
    }
    // A connection refused or reset: the code says which, the message may hold the address.
    const code = (err as { code?: string })?.code;
    throw refused(`could not be fetched${code ? ` (${code})` : ''}`);
  }
}
