/**
 * Anthropic errors, `{type: "error", error: {type, message}}`, as HTTP answers and as `error` events inside a
 * stream; both go through the shared status mapping.
 */
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { upstreamStatusError } from '../../core/dispatch/upstream-errors.ts';
import { GatewayError } from '../../core/errors.ts';

/**
 * The HTTP status Anthropic documents for each error type. A stream's `error` event has no status of its own:
 * this one stands in. overloaded_error is 529, so it becomes 502 UPSTREAM_ERROR (retryable, counts against the
 * breaker) rather than 503 UPSTREAM_UNAVAILABLE, which the gateway keeps for its own open breakers.
 */
export const ERROR_TYPE_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

export function anthropicErrorFromBody(target: ProviderTarget, status: number, body: unknown): GatewayError {
  const error = (body as { error?: { type?: unknown; message?: unknown } } | null)?.error;
  const message = typeof error?.message === 'string' ? error.message
    : typeof body === 'string' && body.length > 0 ? body.slice(0, 500)
    : `HTTP ${status}`;
  return upstreamStatusError(target.slug, status, message, error ?? undefined);
}

/** An `error` event in a stream (or an error object where a message was expected). */
export function anthropicEventError(target: ProviderTarget, body: unknown): GatewayError {
  const type = (body as { error?: { type?: unknown } } | null)?.error?.type;
  return anthropicErrorFromBody(target, (typeof type === 'string' && ERROR_TYPE_STATUS[type]) || 500, body);
}

export function malformed(target: ProviderTarget, what: string): GatewayError {
  return new GatewayError('UPSTREAM_ERROR', `${target.slug} returned a malformed ${what}`, { provider: target.slug });
}
