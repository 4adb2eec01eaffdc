/**
 * The outermost middleware: the request id, the one place errors become responses (in the envelope of
 * the endpoint that failed), the access log, and refusal of new requests while the gateway drains.
 */
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import { GatewayError, renderError, toGatewayError } from '../errors.ts';
import { EventStreamBody, writeEventStream } from '../ingress/event-stream.ts';
import type { Logger } from '../logger.ts';
import type { RequestObserver } from '../observability/observer.ts';
import type { TracedState, Tracing } from '../observability/tracing-types.ts';
import type { GatewayState } from '../pipeline/context.ts';
import { SANE_REQUEST_ID } from '../validation.ts';

export interface Traffic {
  draining: boolean;
  inFlight: number;
  /** Resolves when inFlight drops to zero. */
  idle(): Promise<void>;
}

export function createTraffic(): Traffic & { enter(): void; leave(): void } {
  let waiters: Array<() => void> = [];
  const traffic = {
    draining: false,
    inFlight: 0,
    enter() {
      traffic.inFlight++;
    },
    leave() {
      traffic.inFlight--;
      if (traffic.inFlight === 0) {
        for (const resolve of waiters) resolve();
        waiters = [];
      }
    },
    idle() {
      return traffic.inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
  return traffic;
}

/**
 * `observer`: told of every response as it closes (the access line and the metrics, core/observability/observer.ts).
 * `tracing`: the gateway's tracer when traces are on (core/observability/tracing.ts); undefined costs nothing.
 */
export function requestContext(logger: Logger, traffic: ReturnType<typeof createTraffic>, observer: RequestObserver, tracing?: Tracing): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    const incoming = ctx.get('x-request-id');
    const requestId = SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-ID', requestId);
    traffic.enter();
    // A streamed answer's response carries about a dozen close listeners, each bounded by the request: the gateway's
    // four (traffic, the client-gone signal, connection tracking, usage), its event-stream writer's, and for a body
    // Koa pipes (audio, NDJSON) Node's stream plumbing (pipeline and end-of-stream, twice). Node warns past ten as if
    // they leaked; they go with the response.
    ctx.res.setMaxListeners(20);
    const trace = tracing?.startRequest(ctx, requestId);
    if (trace) ctx.state.trace = trace;
    // Counted until the last byte is written (or the client leaves): streams finish after next() returns.
    ctx.res.once('close', () => {
      traffic.leave();
      observer.closed(ctx, started, performance.now());
      trace?.end(ctx.status, typeof ctx._matchedRoute === 'string' ? ctx._matchedRoute : undefined);
    });
    if (trace) await trace.run(() => handle(ctx, next, traffic, logger));
    else await handle(ctx, next, traffic, logger);
    if (traffic.draining) ctx.set('Connection', 'close');
    if (ctx.body instanceof EventStreamBody) {
      // Written here, after every middleware has set its headers, as Koa would have piped it.
      ctx.respond = false;
      void writeEventStream(ctx.res, ctx.body.events, logger, requestId);
    }
  };
}

async function handle(ctx: Parameters<Middleware>[0], next: () => Promise<unknown>, traffic: Traffic, logger: Logger): Promise<void> {
  try {
    if (traffic.draining) throw new GatewayError('SHUTTING_DOWN', 'The gateway is shutting down; retry on another instance');
    await next();
    if (ctx.status === 404 && ctx.body === undefined) throw new GatewayError('NOT_FOUND', `No route for ${ctx.method} ${ctx.path}`);
  } catch (err) {
    respondWithError(ctx, err, logger);
  }
}

function respondWithError(ctx: Parameters<Middleware>[0], err: unknown, logger: Logger): void {
  const gw = ctx.state.gw as GatewayState | undefined;
  const error = fromKoaError(err);
  ctx.state.error = error; // for the outcome record (core/observability/outcome.ts)
  (ctx.state as TracedState).trace?.failed(error.code);
  if (gw?.signal.aborted) return; // nobody is listening any more
  if (error.code === 'INTERNAL_ERROR') logger.error({ err, requestId: ctx.state.requestId, path: ctx.path }, 'unhandled error');
  if (ctx.headerSent) {
    logger.warn({ requestId: ctx.state.requestId, code: error.code }, 'error after the response started');
    return;
  }
  if (ctx.body instanceof EventStreamBody) ctx.body.discard(logger, ctx.state.requestId);
  ctx.status = error.status;
  for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
  ctx.body = renderError(error, gw?.endpoint.errorEnvelope ?? 'canonical');
}

/** Errors Koa and its router throw themselves (405 from allowedMethods, ...). */
function fromKoaError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const status = (err as { status?: number }).status;
  if (status === 405 || status === 501) return new GatewayError('METHOD_NOT_ALLOWED', (err as Error).message || 'Method not allowed');
  return toGatewayError(err);
}
