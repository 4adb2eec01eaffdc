/**
 * What happens when a response closes: its outcome record is built once (outcome.ts) and feeds the access line,
 * the metrics and the refusal log.
 */
import type { Context } from 'koa';
import type { GatewayConfig } from '../config/types.ts';
import type { Log } from '../log.ts';
import type { GatewayMetrics } from './metrics.ts';
import { accessFields, outcomeRecorder } from './outcome.ts';
import { RefusalLog } from './refusals.ts';

export interface RequestObserver {
  /** `started`, `ended`: performance.now() at arrival and when the response closed. */
  closed(ctx: Context, started: number, ended: number): void;
}

export interface ObserverOptions {
  config: Pick<GatewayConfig, 'models'> & { server: { accessLog: boolean } };
  logger: Log;
  /** Wall clock (ms) for the refusal log's interval. */
  now: () => number;
  metrics?: GatewayMetrics;
}

export function requestObserver(options: ObserverOptions): RequestObserver {
  const { logger, metrics } = options;
  const accessLog = options.config.server.accessLog;
  const record = outcomeRecorder(options.config);
  const refusals = new RefusalLog(logger, options.now);
  return {
    closed(ctx, started, ended) {
      // In a response's close listener: nothing here may throw into the server.
      try {
        const outcome = record(ctx, started, ended);
        if (accessLog) logger.info(accessFields(outcome), 'request');
        metrics?.observe(outcome);
        refusals.note(outcome);
      } catch (err) {
        logger.error({ err, requestId: ctx.state.requestId }, 'recording a request\'s outcome failed');
      }
    },
  };
}

/** For apps that log and measure nothing (the CLI's local admin server). */
export const UNOBSERVED: RequestObserver = { closed: () => {} };
