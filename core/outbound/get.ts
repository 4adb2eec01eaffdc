/**
 * A GET of a caller-chosen URL that keeps the answer's bytes (audio `file_url`): every hop goes through
 * pinnedExchange, so each redirect's location is checked again (scheme, resolution, every address, pinning);
 * the body is capped by its Content-Length before reading and by counting while reading, and one deadline
 * covers the whole chain of redirects.
 */
import { pinnedExchange, systemResolve, type ExchangeResponse, type ResolveAll } from './fetch.ts';
import { OutboundRefusedError, type OutboundPolicy } from './policy.ts';

export interface OutboundGetOptions {
  /** Most body bytes accepted; a longer answer is refused (ResponseTooLargeError). */
  maxBytes: number;
  /** Deadline of everything, every redirect included, from the first resolution to the last body byte. */
  timeoutMs: number;
  /** Redirects followed before TooManyRedirectsError; 0 makes every redirect an error. */
  maxRedirects?: number;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface OutboundBody {
  bytes: Buffer;
  /** The Content-Type header as sent, if any. */
  contentType: string | undefined;
  /** The URL the bytes came from, after redirects. */
  url: string;
  /** The address the last request went to. */
  address: string;
}

export const DEFAULT_MAX_REDIRECTS = 3;

/** The answer is longer than the cap: said by its Content-Length, or found while reading. */
export class ResponseTooLargeError extends Error {
  override name = 'ResponseTooLargeError';
  constructor(readonly maxBytes: number) {
    super(`the answer is larger than ${maxBytes} bytes`);
  }
}

/** The final answer was not a 2xx (a redirect without a usable Location included). */
export class UnexpectedStatusError extends Error {
  override name = 'UnexpectedStatusError';
  constructor(readonly status: number, detail = '') {
    super(`the URL answered HTTP ${status}${detail}`);
  }
}

export class TooManyRedirectsError extends Error {
  override name = 'TooManyRedirectsError';
  constructor(readonly maxRedirects: number) {
    super(`more than ${maxRedirects} redirects`);
  }
}

/** The whole exchange did not finish within timeoutMs. */
export class OutboundTimeoutError extends Error {
  override name = 'OutboundTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`no complete answer within ${timeoutMs} ms`);
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** undici's own phase deadlines, which may fire a moment before the overall one. */
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

const header = (response: ExchangeResponse, name: string): string | undefined => {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

async function readCapped(response: ExchangeResponse, maxBytes: number): Promise<Buffer> {
  const declared = Number(header(response, 'content-length'));
  // Refused before a byte of the body is read.
  if (Number.isFinite(declared) && declared > maxBytes) throw new ResponseTooLargeError(maxBytes);
  const chunks: Buffer[] = [];
  let read = 0;
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    read += chunk.length;
    // A missing or false Content-Length is caught here; returning closes the connection (pinnedExchange).
    if (read > maxBytes) throw new ResponseTooLargeError(maxBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, read);
}

type Hop = { kind: 'body'; body: OutboundBody } | { kind: 'redirect'; status: number; location: string };

/**
 * GETs `urlText` and returns its body. Throws OutboundRefusedError (policy, at any hop, before anything is
 * sent there), ResolveError, UnexpectedStatusError, TooManyRedirectsError, ResponseTooLargeError,
 * OutboundTimeoutError, or the network error of a request that was attempted.
 */
export async function outboundGet(
  urlText: string, options: OutboundGetOptions, policy: OutboundPolicy, resolve: ResolveAll = systemResolve,
): Promise<OutboundBody> {
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const started = Date.now();
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  let current = urlText;
  try {
    for (let redirects = 0; ; redirects++) {
      const left = Math.max(1, options.timeoutMs - (Date.now() - started));
      const init = { method: 'GET' as const, headers: options.headers ?? {}, timeoutMs: left, signal };
      const hop = await pinnedExchange(current, init, policy, resolve, async (response, pinned): Promise<Hop> => {
        const location = header(response, 'location');
        if (REDIRECTS.has(response.statusCode)) {
          if (!location) throw new UnexpectedStatusError(response.statusCode, ' without a Location');
          return { kind: 'redirect', status: response.statusCode, location };
        }
        if (response.statusCode < 200 || response.statusCode > 299) throw new UnexpectedStatusError(response.statusCode);
        const bytes = await readCapped(response, options.maxBytes);
        return { kind: 'body', body: { bytes, contentType: header(response, 'content-type'), url: current, address: pinned.address } };
      });
      if (hop.kind === 'body') return hop.body;
      if (redirects >= maxRedirects) throw new TooManyRedirectsError(maxRedirects);
      let next: URL;
      try {
        next = new URL(hop.location, current);
      } catch {
        throw new UnexpectedStatusError(hop.status, ' with a Location that is not a URL');
      }
      current = next.href;
    }
  } catch (err) {
    const e = err as { name?: string; code?: string };
    const answered = err instanceof OutboundRefusedError || err instanceof ResponseTooLargeError
      || err instanceof UnexpectedStatusError || err instanceof TooManyRedirectsError;
    if (!answered && (deadline.aborted || e?.name === 'TimeoutError' || TIMEOUT_CODES.has(e?.code ?? ''))) {
      throw new OutboundTimeoutError(options.timeoutMs);
    }
    throw err;
  }
}
