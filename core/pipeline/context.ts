/**
 * Per-request state, carried in `ctx.state.gw`. Everything a plugin may read or set lives here, typed.
 */
import type { Next, ParameterizedContext } from 'koa';
import type { CanonicalRequest, CanonicalResult, ChatCompletionChunk, Usage } from '../canonical/chat.ts';
import type { GatewayError } from '../errors.ts';
import type { EffectivePolicy, RateLimits } from '../identity/policy.ts';
import type { EndpointDefinition } from '../ingress/endpoint.ts';

export interface Caller {
  kind: 'api_key' | 'jwt';
  /** The key id or the JWT subject. */
  id: string;
  tenantId: string;
  organizationId: string | null;
  departmentId: string | null;
  capabilities: readonly string[];
  /** The key's address allow-list (single addresses and CIDR ranges); empty means unrestricted. */
  allowedIps: readonly string[];
  /** The key's own limits, for the ratelimit plugin; null for JWT callers and keys without limits. */
  rateLimits: RateLimits | null;
  /** The JWT's role claim (`admin` may use /admin/v1); null for API keys. */
  role: string | null;
  /** The organization's policy narrowed by the department's: model allow-lists, overrides, rate limits. */
  policy: EffectivePolicy;
}

export interface ResolvedTarget {
  provider: string;
  baseUrl: string;
  /** The model id the caller asked for, and the name sent upstream. */
  requestedModel: string;
  upstreamModel: string;
}

export type StreamStatus = 'completed' | 'aborted' | 'failed';

export interface StreamOutcome {
  status: StreamStatus;
  /** The last usage the stream reported, or null when it ended before any. */
  usage: Usage | null;
  chunks: number;
  error?: GatewayError;
}

/** Observes a stream as it flows: called per chunk, then exactly once on completion. Never holds chunks. */
export interface StreamTap {
  chunk?(chunk: ChatCompletionChunk): void;
  complete?(outcome: StreamOutcome): void;
}

export interface GatewayState {
  readonly requestId: string;
  readonly endpoint: EndpointDefinition;
  readonly pipeline: string;
  /** performance.now() when the request arrived. */
  readonly startedAt: number;
  /** Aborted when the client goes away before the answer is complete. */
  readonly signal: AbortSignal;
  /**
   * The caller's address: the socket peer, or with server.trustProxy the rightmost X-Forwarded-For hop that is
   * not a trusted proxy. IPv4-mapped IPv6 addresses are given as their IPv4 host.
   */
  readonly clientIp: string;
  caller?: Caller;
  /** Reads, parses and validates the body the first time it is called; later calls return the same request. */
  request(): Promise<CanonicalRequest>;
  /** The parsed request, once request() has resolved. */
  canonical?: CanonicalRequest;
  target?: ResolvedTarget;
  /**
   * A complete (non-streaming) answer, set by the dispatcher or by a plugin answering early: of the request's
   * modality (a ChatCompletion for chat, an EmbeddingsResult, a RerankResult). Its `usage` is what plugins read.
   */
  result?: CanonicalResult;
  /** Set when the provider reported no usage and the gateway estimated it (core/canonical/estimate.ts). */
  usageEstimated?: boolean;
  /** A streaming answer; read it only through taps. */
  stream?: AsyncIterable<ChatCompletionChunk>;
  readonly taps: StreamTap[];
  tap(observer: StreamTap): void;
}

export type GatewayContext = ParameterizedContext<{ gw: GatewayState; requestId: string }>;
export type GatewayMiddleware = (ctx: GatewayContext, next: Next) => Promise<void>;
