/**
 * Per-request state, carried in `ctx.state.gw`. Everything a plugin may read or set lives here, typed.
 */
import type { Next, ParameterizedContext } from 'koa';
import type { CanonicalRequest, CanonicalResult, ChatCompletionChunk, Usage } from '../canonical/chat.ts';
import type { GatewayError } from '../errors.ts';
import type { Caller } from './caller.ts';
import type { EndpointDescription } from './routes.ts';

export type { Caller };

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

/**
 * A plugin's part of the response path. Responses pass the stages in reverse pipeline order (Envoy's encode
 * path): the stage of the plugin listed last (nearest the dispatcher) sees the answer first, and what it
 * changes is what the plugins listed before it see. Register with gw.stage() at any point of the request.
 */
export interface ResponseStage {
  /**
   * A complete (non-streamed) answer: return a replacement, or nothing to keep it. Throwing a GatewayError
   * answers with that error instead. Runs as control leaves the plugin, before the plugins listed before it.
   */
  result?(result: CanonicalResult): CanonicalResult | void | Promise<CanonicalResult | void>;
  /**
   * One chunk of a stream. Return nothing to pass it on unchanged, a chunk to pass that instead, or a list: []
   * holds the chunk back, several release held ones (at most `holdBack` chunks may be held at once). Throwing a
   * GatewayError ends the stream with the endpoint's error event; so does any other error (as INTERNAL_ERROR).
   */
  chunk?(chunk: ChatCompletionChunk): ChatCompletionChunk | readonly ChatCompletionChunk[] | void;
  /** The stream is ending normally: return the chunks still held, to pass on before the end. May throw as chunk(). */
  end?(): readonly ChatCompletionChunk[] | void;
  /**
   * Exactly once per stream that was sent, with what reached this stage: completed, aborted or failed. A stream
   * ended by a stage of a plugin listed before this one is aborted here (its consumer stopped), without that error.
   */
  complete?(outcome: StreamOutcome): void;
  /** How many chunks this stage may hold back at once (default 0); holding more ends the stream as a bug. */
  holdBack?: number;
}

/** One guard finding: what was found, where, and what the guard did about it. */
export interface GuardVerdict {
  /** The guard that decided: `pii`, `injection`, `toxicity`, or a third-party detector's name. */
  guard: string;
  /** What it found: `email`, `payment_card`, `secret`, `injection`, `toxicity:insult`, ... */
  type: string;
  action: 'block' | 'redact' | 'log';
  direction: 'input' | 'output';
  /** How many matches of this type. */
  count: number;
  /** A scored detector's score (prompt injection), when it has one. */
  score?: number;
}

/**
 * What the core notes about one request while serving it, for the outcome record written when the response
 * closes (core/observability/outcome.ts): plain numbers set at a few boundaries, so that noting them costs no
 * allocation or closure.
 */
export interface RequestObservation {
  /** performance.now() when the dispatcher began calling providers; 0 when it never did. */
  upstreamStart: number;
  /**
   * performance.now() when the answer was in hand: a complete answer returned (body read and translated), or a
   * stream's last upstream chunk decoded (or the call failed). 0 while waiting.
   */
  upstreamEnd: number;
  /** A stream: ms from upstreamStart to its first chunk (retries and fallbacks included); -1 otherwise. */
  firstTokenMs: number;
  /** A stream: the usage its provider reported last (or the gateway's estimate when it reported none). */
  streamUsage: Usage | null;
  /** Per pipeline position: the plugin's own ms (downstream excluded), -1 where it did not run. */
  readonly pluginMs: number[];
}

export interface GatewayState {
  readonly requestId: string;
  readonly endpoint: EndpointDescription & { kind: 'dispatch' | 'local' };
  readonly pipeline: string;
  /** performance.now() when the request arrived. */
  readonly startedAt: number;
  /** Aborted when the client goes away before the answer is complete, or by abort(). */
  readonly signal: AbortSignal;
  /** Aborts `signal` (the upstream call) while the caller's answer goes on: a cancelled Responses stream. */
  abort(reason?: unknown): void;
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
  /**
   * Chunks of the gateway's vector stores put into the request (file_search, a retrieval plugin): the usage
   * record keeps their references.
   */
  retrieval?: { chunks: Array<{ storeId: string; fileId: string; chunkIndex: number; score: number }> };
  /** Set when the provider reported no usage and the gateway estimated it (core/canonical/estimate.ts). */
  usageEstimated?: boolean;
  /** A streaming answer; read it only through a stage. */
  stream?: AsyncIterable<ChatCompletionChunk>;
  /**
   * Set by a plugin that answered from a cache (gw.result or gw.stream) without calling a provider: the answer
   * cost nothing upstream. Usage records it at cost 0, budgets charge nothing. `similarity` is 1 for an exact hit.
   */
  servedFromCache?: { kind: 'exact' | 'semantic'; similarity: number };
  /**
   * What guard plugins found in this request and its answer, in the order found: the usage record and the audit
   * log keep them. A guard appends; nothing else writes here.
   */
  guardVerdicts?: GuardVerdict[];
  /** Adds the calling plugin's stage to the response path (see ResponseStage for the order). */
  stage(stage: ResponseStage): void;
  /** Timings the core notes for the access line and the metrics (core/observability); plugins only read it. */
  readonly observed: RequestObservation;
}

export type GatewayContext = ParameterizedContext<{ gw: GatewayState; requestId: string }>;
export type GatewayMiddleware = (ctx: GatewayContext, next: Next) => Promise<void>;
