import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { upstreamStatusError, type UpstreamErrorDetails } from '../../core/dispatch/upstream-errors.ts';
import type { GatewayError } from '../../core/errors.ts';

/** Cohere answers errors as {id, message}; 498 is its "invalid token", a refused credential like 401. */
export function cohereError(target: ProviderTarget, status: number, body: unknown): GatewayError {
  const b = body as { message?: unknown } | null;
  const message = typeof b?.message === 'string' && b.message !== '' ? b.message
    : typeof body === 'string' && body !== '' ? body.slice(0, 500)
    : `HTTP ${status}`;
  const error = upstreamStatusError(target.slug, status === 498 ? 401 : status, message, body && typeof body === 'object' ? body : undefined);
  if (status === 498) (error.details as UpstreamErrorDetails).upstreamStatus = 498;
  return error;
}
