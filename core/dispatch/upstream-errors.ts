/** How an upstream's answer or failure becomes the caller's error; shared by every translator. */
import { GatewayError } from '../errors.ts';

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

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/** A transport failure (refused, reset, timed out) -> UPSTREAM_ERROR or UPSTREAM_TIMEOUT. */
export function transportError(provider: string, err: unknown, phase: 'request' | 'stream'): GatewayError {
  if (err instanceof GatewayError) return err;
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
