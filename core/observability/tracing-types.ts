/**
 * The shapes tracing.ts and tracing-sdk.ts share, apart so that the request path needs no OpenTelemetry import.
 */
import type { Context } from 'koa';
import type { CanonicalRequest, CanonicalResult, ChatCompletionChunk } from '../canonical/chat.ts';

/** What an upstream attempt's span reads of the request's state (core/pipeline/context.ts GatewayState). */
export interface AttemptState {
  readonly signal: AbortSignal;
  result?: CanonicalResult;
  stream?: AsyncIterable<ChatCompletionChunk>;
}

/** What it reads of the target (core/dispatch/provider.ts ProviderTarget). */
export interface AttemptTarget {
  slug: string;
  baseUrl: string;
  upstreamModel: string;
}

export type TracingEnv = Readonly<Record<string, string | undefined>>;

/** What the environment asks for: undefined when traces are off. */
export interface TracingSettings {
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES as written (key=value,...), parsed by the SDK side. */
  resourceAttributes: string | undefined;
  /** The collector's traces URL. */
  url: string;
  /** OTEL_BSP_* that were set: the batch span processor's queue, batch size, delay and export timeout. */
  batch: { maxQueueSize?: number; maxExportBatchSize?: number; scheduledDelayMillis?: number; exportTimeoutMillis?: number };
}

/** The part of the gateway's traces a request sees: the SERVER span and its children. */
export interface RequestTrace {
  /** Runs the request's handling with this request's span as the context outgoing calls propagate. */
  run<T>(fn: () => Promise<T>): Promise<T>;
  /** The error the gateway answered with (its spec code), for error.type. */
  failed(code: string): void;
  /**
   * One CLIENT span around one upstream attempt (the call to one target), ended when its answer is complete:
   * at once for a whole answer, when the stream ends for a streamed one (gw.stream is wrapped for that).
   */
  upstreamAttempt(gw: AttemptState, request: CanonicalRequest, target: AttemptTarget, call: () => Promise<void>): Promise<void>;
  /** Ends the SERVER span (the response closed), and any attempt span still open, as failed. */
  end(status: number, route: string | undefined): void;
}

/**
 * Where a traced request's RequestTrace is kept: ctx.state.trace, set by the outermost middleware only when traces
 * are on. Not part of the plugins' GatewayContext: tracing is the gateway's own.
 */
export interface TracedState {
  trace?: RequestTrace;
}

export interface Tracing {
  /** Where spans are exported. */
  readonly url: string;
  startRequest(ctx: Context, requestId: string): RequestTrace;
  /**
   * The headers an upstream request goes out with: the active attempt's (or request's) `traceparent` and
   * `tracestate` replace any the headers carried. Outside a traced request, the headers as they are.
   */
  outgoingHeaders(headers: Record<string, string>): Record<string, string>;
  /** Exports what is buffered and stops the exporter. */
  close(): Promise<void>;
}
