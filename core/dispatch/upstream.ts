/** HTTP to providers: one undici agent with keep-alive pools per origin, and the configured timeouts. */
import type { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import type { UpstreamConfig } from '../config/types.ts';
import type { UpstreamRequest } from './provider.ts';

export type UpstreamResponse = Dispatcher.ResponseData;

interface Base {
  origin: string;
  pathPrefix: string;
}

const MAX_ERROR_BODY = 64 * 1024;

export class UpstreamClient {
  private readonly agent: Agent;
  private readonly bases = new Map<string, Base>();

  constructor(config: UpstreamConfig) {
    this.agent = new Agent({
      connect: { timeout: config.connectTimeoutMs },
      headersTimeout: config.headersTimeoutMs,
      bodyTimeout: config.bodyTimeoutMs,
      keepAliveTimeout: config.keepAliveTimeoutMs,
      connections: config.connectionsPerOrigin,
    });
  }

  /** `stream`: a body streamed as it arrives instead of `request.body` (the passthrough). */
  send(baseUrl: string, request: UpstreamRequest, signal: AbortSignal, stream?: Readable): Promise<UpstreamResponse> {
    const absolute = /^https?:\/\//i.test(request.path);
    const base = this.base(absolute ? request.path : baseUrl);
    return this.agent.request({
      origin: base.origin,
      path: absolute ? base.pathPrefix || '/' : base.pathPrefix + request.path,
      method: request.method,
      headers: request.headers,
      body: stream ?? request.body ?? null,
      signal,
    });
  }

  async close(): Promise<void> {
    await this.agent.close();
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
  const text = Buffer.concat(parts).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
