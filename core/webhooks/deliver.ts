/**
 * Webhook delivery as a job of kind `webhook.deliver`: one attempt per run, signed afresh, numbered by the
 * job's persisted attempt count, so an attempt that crashed mid-send keeps its number and the next one gets a
 * new one. A 2xx ends it; anything else is retried with exponential backoff until webhooks.maxAttempts.
 */
import type { WebhooksConfig } from '../config/types.ts';
import type { JobContext, JobHandler, JobResult, JobSpec } from '../jobs/types.ts';
import type { Log } from '../log.ts';
import { outboundFetch, ResolveError, systemResolve, type ResolveAll } from '../outbound/fetch.ts';
import { OutboundRefusedError, type OutboundPolicy } from '../outbound/policy.ts';
import { sign } from './sign.ts';

export const WEBHOOK_DELIVER = 'webhook.deliver';

/** The job's payload. It holds the secret, so it is never logged; `body` is the exact JSON text every attempt sends. */
export interface WebhookDelivery {
  url: string;
  secret: string;
  body: string;
  eventType: string;
  /** X-Gateway-Delivery is `<deliveryId>.<attempt>`; for a batch, its id. */
  deliveryId: string;
}

/** The job that delivers `delivery`; its key keeps one live delivery per event. */
export function webhookDeliveryJob(delivery: WebhookDelivery, runAt?: number): JobSpec {
  return { kind: WEBHOOK_DELIVER, key: `${WEBHOOK_DELIVER}:${delivery.deliveryId}`, payload: delivery, ...(runAt === undefined ? {} : { runAt }) };
}

export interface WebhookDeliveryDeps {
  config: WebhooksConfig;
  policy: OutboundPolicy;
  resolve?: ResolveAll;
  /** [0, 1); the jitter of the backoff. */
  random?: () => number;
  logger?: Log;
}

/** The delay after failed attempt `attempt` (1-based): backoffMs doubled per attempt, half of it fixed, half random. */
export function retryDelay(attempt: number, backoffMs: number, random: () => number): number {
  const full = backoffMs * 2 ** Math.max(0, attempt - 1);
  return Math.round(full / 2 + random() * (full / 2));
}

function readDelivery(payload: unknown): WebhookDelivery | null {
  if (!payload || typeof payload !== 'object') return null;
  const p = payload as Record<string, unknown>;
  const fields = ['url', 'secret', 'body', 'eventType', 'deliveryId'] as const;
  if (!fields.every((f) => typeof p[f] === 'string') || !p.secret || !p.deliveryId) return null;
  return { url: p.url as string, secret: p.secret as string, body: p.body as string, eventType: p.eventType as string, deliveryId: p.deliveryId as string };
}

/** undici's own phase deadlines, which may fire a moment before the overall one. */
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** A failure in words that hold neither the secret nor the URL's path and query (they may carry tokens). */
function describe(err: unknown, timeoutMs: number): string {
  if (err instanceof OutboundRefusedError) return `refused: ${err.reason}`;
  if (err instanceof ResolveError) return err.message;
  const e = err as { name?: string; code?: string; message?: string };
  if (e?.name === 'TimeoutError' || TIMEOUT_CODES.has(e?.code ?? '')) return `no complete answer within ${timeoutMs} ms`;
  return [e?.code ?? e?.name ?? 'error', e?.message].filter(Boolean).join(': ');
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(not a URL)';
  }
}

export function webhookDeliveryHandler(deps: WebhookDeliveryDeps): JobHandler {
  const { config, policy, logger } = deps;
  const resolve = deps.resolve ?? systemResolve;
  const random = deps.random ?? Math.random;
  return async (ctx: JobContext): Promise<JobResult> => {
    const delivery = readDelivery(ctx.job.payload);
    if (!delivery) return { status: 'failed', error: 'the job payload is not a webhook delivery' };
    const attempt = ctx.job.attempts;
    const id = `${delivery.deliveryId}.${attempt}`;
    const at = { deliveryId: id, host: hostOf(delivery.url), attempt, maxAttempts: config.maxAttempts };
    let error: string;
    try {
      const response = await outboundFetch(delivery.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-gateway-event': delivery.eventType,
          'x-gateway-signature': sign(delivery.secret, Math.floor(ctx.now() / 1000), delivery.body),
          'x-gateway-delivery': id,
        },
        body: delivery.body,
        timeoutMs: config.timeoutMs,
        signal: ctx.signal,
      }, policy, resolve);
      if (response.status >= 200 && response.status < 300) {
        logger?.info({ ...at, status: response.status }, 'webhook delivered');
        return { status: 'done' };
      }
      error = `the receiver answered ${response.status}${response.status >= 300 && response.status < 400 ? ' (redirects are not followed)' : ''}`;
    } catch (err) {
      error = describe(err, config.timeoutMs);
    }
    // Cut short by a shutdown or a lost lease: not the receiver's failure, so it never ends the delivery.
    if (ctx.signal.aborted) return { status: 'retry', at: ctx.now(), error: `attempt ${attempt} interrupted: ${error}` };
    if (attempt >= config.maxAttempts) {
      logger?.warn({ ...at, error }, 'webhook delivery failed: no attempts left');
      return { status: 'failed', error: `attempt ${attempt} of ${config.maxAttempts}: ${error}` };
    }
    const next = ctx.now() + retryDelay(attempt, config.backoffMs, random);
    logger?.info({ ...at, error, retryAt: new Date(next).toISOString() }, 'webhook attempt failed: retrying');
    return { status: 'retry', at: next, error: `attempt ${attempt} of ${config.maxAttempts}: ${error}` };
  };
}
