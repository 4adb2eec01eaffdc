/**
 * HTTP to providers: one undici agent with keep-alive pools per origin, the configured timeouts, a bounded wait
 * for a connection when an origin's pool is full, and size limits on what is read of an answer.
 */
import type { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import type { UpstreamConfig } from '../config/types.ts';
import { silentLogger, type Logger } from '../logger.ts';
import type { Tracing } from '../observability/tracing-types.ts';
import { abortSignalOf, type CallSignal } from '../pipeline/abort.ts';
import { OriginSlots, type OriginPoolState } from './origin-slots.ts';
import { WholeAnswer, type WholeResponse } from './whole-answer.ts';
import type { UpstreamRequest } from './provider.ts';
import { UpstreamTooLargeError } from './upstream-errors.ts';

export type UpstreamResponse = Dispatcher.ResponseData;
export type { WholeResponse };

interface Base {
  origin: string;
  pathPrefix: string;
}

const MAX_ERROR_BODY = 64 * 1024;
/** scheme://authority, then the path and query as written. */
const ABSOLUTE = /^(https?:\/\/[^/?#]+)([^#]*)/i;

export class UpstreamClient {
  private readonly agent: Agent;
  private readonly bases = new Map<string, Base>();
  private readonly slots: OriginSlots;
  /** upstream.maxBodyBytes, for readBody(). */
  readonly maxBodyBytes: number;
  /** upstream.maxFrameBytes, for the stream decoders. */
  readonly maxFrameBytes: number;

  /** `tracing`: when traces are on, every request goes out with the active span's traceparent (and tracestate). */
  constructor(config: UpstreamConfig, logger: Logger = silentLogger(), private readonly tracing?: Tracing) {
    this.maxBodyBytes = config.maxBodyBytes;
    this.maxFrameBytes = config.maxFrameBytes;
    this.slots = new OriginSlots(config.connectionsPerOrigin, config.queueTimeoutMs, logger);
    this.agent = new Agent({
      connect: { timeout: config.connectTimeoutMs },
      headersTimeout: config.headersTimeoutMs,
      bodyTimeout: config.bodyTimeoutMs,
      keepAliveTimeout: config.keepAliveTimeoutMs,
      connections: config.connectionsPerOrigin,
    });
  }

  /** `stream`: a body streamed as it arrives instead of `request.body` (the passthrough). */
  send(baseUrl: string, request: UpstreamRequest, signal: CallSignal, stream?: Readable): Promise<UpstreamResponse> {
    return this.request({ ...this.target(baseUrl, request, stream), signal: abortSignalOf(signal) });
  }

  /**
   * The whole answer, read as it arrives: a success up to `maxBytes` (past it, UpstreamTooLargeError), an error
   * answer (status 400 and up) up to its first 64 KiB. Without a stream object or an AbortSignal between undici
   * and the bytes, this costs about half of send() and a read (bench/analysis.md).
   */
  async sendWhole(baseUrl: string, request: UpstreamRequest, signal: CallSignal, maxBytes: number, stream?: Readable): Promise<WholeResponse> {
    const options = this.target(baseUrl, request, stream);
    const release = this.slots.tryAcquire(options.origin, signal) ?? await this.slots.acquire(options.origin, signal);
    try {
      return await new Promise<WholeResponse>((resolve, reject) => {
        this.agent.dispatch(options, new WholeAnswer(signal, maxBytes, MAX_ERROR_BODY, resolve, reject));
      });
    } finally {
      release();
    }
  }

  private target(baseUrl: string, request: UpstreamRequest, stream: Readable | undefined): Dispatcher.DispatchOptions & { origin: string } {
    const absolute = ABSOLUTE.exec(request.path);
    const base = absolute ? undefined : this.base(baseUrl);
    return {
      // An absolute URL's path is sent as written: re-parsing it would resolve `..` and turn `\` into `/`.
      origin: absolute ? new URL(absolute[1]!).origin : base!.origin,
      path: absolute ? (absolute[2]!.startsWith('/') ? absolute[2]! : `/${absolute[2]!}`) : base!.pathPrefix + request.path,
      method: request.method,
      // The one place every provider's and modality's request headers are final, the passthrough's included.
      headers: this.tracing ? this.tracing.outgoingHeaders(request.headers) : request.headers,
      body: stream ?? request.body ?? null,
    };
  }

  /** Requests in flight and waiting, per origin that has any (or refused one lately). */
  pools(): OriginPoolState[] {
    return this.slots.state();
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /**
   * The request holds its origin's slot until its answer's body closes (read to the end, or destroyed), so
   * undici never queues past its own pool.
   */
  private async request(options: Dispatcher.RequestOptions & { signal: AbortSignal }): Promise<UpstreamResponse> {
    const origin = String(options.origin);
    const release = this.slots.tryAcquire(origin, options.signal) ?? await this.slots.acquire(origin, options.signal);
    let response: UpstreamResponse;
    try {
      response = await this.agent.request(options);
    } catch (err) {
      release();
      throw err;
    }
    if (response.body.closed) release();
    else response.body.once('close', release);
    return response;
  }

  private base(baseUrl: string): Base {
    let base = this.bases.get(baseUrl);
    if (!base) {
      const url = new URL(baseUrl);
      base = { origin: url.origin, pathPrefix: url.pathname.replace(/\/+$/, '') + url.search };
      // Absolute follow-up URLs are one-offs: only base URLs (a handful per config) are remembered.
      if (this.bases.size < 1024) this.bases.set(baseUrl, base);
    }
    return base;
  }
}

/** Reads at most 64 KiB of an error answer and parses it as JSON when it is JSON. */
export async function readErrorBody(response: UpstreamResponse): Promise<unknown> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const part of response.body) {
      const buf = part as Buffer;
      if (size + buf.length > MAX_ERROR_BODY) {
        parts.push(buf.subarray(0, MAX_ERROR_BODY - size));
        response.body.destroy();
        break;
      }
      parts.push(buf);
      size += buf.length;
    }
  } catch {
    // A broken error body is still an error; what was read is enough.
  }
  return parseErrorBody(Buffer.concat(parts));
}

/** An error answer's bytes (its first 64 KiB), as JSON when they are JSON, else as text. */
export function parseErrorBody(bytes: Buffer): unknown {
  const text = bytes.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Reads a whole answer body, at most `maxBytes` of it: a declared or actual length past it destroys the body (the
 * connection is dropped, not drained) and throws UpstreamTooLargeError.
 */
export async function readBody(response: UpstreamResponse, maxBytes: number): Promise<Buffer> {
  const declared = Number(response.headers['content-length']);
  if (declared > maxBytes) {
    response.body.destroy();
    throw new UpstreamTooLargeError('body', maxBytes);
  }
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of response.body) {
    const buf = part as Buffer;
    size += buf.length;
    if (size > maxBytes) {
      response.body.destroy();
      throw new UpstreamTooLargeError('body', maxBytes);
    }
    parts.push(buf);
  }
  return Buffer.concat(parts, size);
}

/** An answer not passed on: its body goes, and the abort that destroying it reports is expected, not a crash. */
export function discardBody(response: UpstreamResponse): void {
  response.body.once('error', () => {}).destroy();
}
