/** How an upstream's answer or failure becomes the caller's error; shared by every translator. */
import { GatewayError } from '../errors.ts';
import { UpstreamTooLargeError } from '../streaming/events.ts';

export interface UpstreamErrorDetails {
  provider: string;
  upstreamStatus?: number;
  upstreamError?: unknown;
}

/** Caller errors (4xx other than 408 and 429) say nothing about the upstream's health. */
export function countsAgainstUpstream(err: unknown): boolean {
  if (!(err instanceof GatewayError)) return true;
  const status = (err.details as UpstreamErrorDetails | null)?.upstreamStatus;
  if (status !== undefined) return status >= 500 || status === 408 || status === 429;
  return err.code === 'UPSTREAM_ERROR' || err.code === 'UPSTREAM_TIMEOUT';
}

/** Transient failures: trying the same target again may work (only before the first byte went to the caller). */
export function isRetryable(err: unknown): boolean {
  if (!(err instanceof GatewayError)) return false;
  if (err.code === 'UPSTREAM_TIMEOUT' || err.code === 'UPSTREAM_RATE_LIMITED') return true;
  // An answer too large would be generated (and paid for) again: another target may answer shorter.
  if ((err.details as { limitBytes?: number } | null)?.limitBytes !== undefined) return false;
  return err.code === 'UPSTREAM_ERROR' && countsAgainstUpstream(err);
}

/**
 * Failures another target may not share: the transient ones, an open breaker, and a refused gateway
 * credential (another provider has its own).
 */
export function shouldFallBack(err: unknown): boolean {
  return isRetryable(err) || (err instanceof GatewayError && (err.code === 'UPSTREAM_UNAVAILABLE' || err.code === 'UPSTREAM_ERROR'));
}

export function upstreamStatusError(provider: string, status: number, message: string, upstreamError?: unknown): GatewayError {
  const details: UpstreamErrorDetails = { provider, upstreamStatus: status };
  if (upstreamError !== undefined) details.upstreamError = upstreamError;
  const text = `${provider}: ${message}`;
  if (status === 408) return new GatewayError('UPSTREAM_TIMEOUT', text, details);
  if (status === 429) return new GatewayError('UPSTREAM_RATE_LIMITED', text, details);
  // The gateway's own credential was refused: not something the caller can fix.
  if (status === 401 || status === 403) return new GatewayError('UPSTREAM_ERROR', `${provider} refused the gateway's credential: ${message}`, details);
  if (status >= 400 && status < 500) return new GatewayError('UPSTREAM_BAD_REQUEST', text, details);
  return new GatewayError('UPSTREAM_ERROR', text, details);
}

export { UpstreamTooLargeError };

/**
 * Every connection to the origin stayed busy for upstream.queueTimeoutMs: the gateway's own limit, not the
 * upstream's failure, so it answers 503 and never counts against the breaker.
 */
export class UpstreamPoolFullError extends Error {
  constructor(readonly connections: number, readonly queueTimeoutMs: number) {
    super(`all ${connections} connections are busy`);
  }
}

function poolFullError(provider: string, err: UpstreamPoolFullError): GatewayError {
  const waited = err.queueTimeoutMs === 0 ? '' : ` and none freed within ${err.queueTimeoutMs} ms`;
  return new GatewayError('UPSTREAM_UNAVAILABLE', `${provider} is busy: all ${err.connections} connections the gateway keeps to it are in use${waited} (upstream.connectionsPerOrigin, upstream.queueTimeoutMs)`, { provider, pool: 'full' });
}

/** The refusal above, once mapped: the dispatcher does not queue the request again behind the same pool. */
export function isPoolFull(err: unknown): boolean {
  return err instanceof GatewayError && (err.details as { pool?: unknown } | null)?.pool === 'full';
}

const LIMIT_SETTING = { 'stream frame': 'upstream.maxFrameBytes', body: 'upstream.maxBodyBytes' } as const;

function tooLargeError(provider: string, err: UpstreamTooLargeError): GatewayError {
  return new GatewayError('UPSTREAM_ERROR', `${provider} sent a ${err.what} larger than ${err.limitBytes} bytes (${LIMIT_SETTING[err.what]}); the connection was dropped`, { provider, limitBytes: err.limitBytes });
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/** A transport failure (refused, reset, timed out) -> UPSTREAM_ERROR or UPSTREAM_TIMEOUT. */
export function transportError(provider: string, err: unknown, phase: 'request' | 'stream'): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err instanceof UpstreamTooLargeError) return tooLargeError(provider, err);
  if (err instanceof UpstreamPoolFullError) return poolFullError(provider, err);
  const e = err as { code?: string; message?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code;
  const where = phase === 'stream' ? ' while streaming' : '';
  if (code && TIMEOUT_CODES.has(code)) {
    return new GatewayError('UPSTREAM_TIMEOUT', `${provider} timed out${where} (${code})`, { provider });
  }
  return new GatewayError('UPSTREAM_ERROR', `${provider} could not be reached${where}: ${code ?? e.message ?? 'connection failed'}`, { provider });
}

export function isAbort(err: unknown): boolean {
  const e = err as { name?: string; code?: string };
  return e?.name === 'AbortError' || e?.code === 'UND_ERR_ABORTED' || e?.code === 'ABORT_ERR';
}
