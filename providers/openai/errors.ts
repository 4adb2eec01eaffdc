import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { upstreamStatusError } from '../../core/dispatch/upstream-errors.ts';
import type { GatewayError } from '../../core/errors.ts';

/** OpenAI answers errors as {error: {message, type, code, param}}; others in this family do too, mostly. */
export function openaiErrorFromBody(target: ProviderTarget, status: number, body: unknown): GatewayError {
  const error = (body as { error?: { message?: unknown } } | null)?.error;
  const message = typeof error?.message === 'string' ? error.message
    : typeof error === 'string' ? error
    : typeof body === 'string' && body.length > 0 ? body.slice(0, 500)
    : `HTTP ${status}`;
  return upstreamStatusError(target.slug, status, message, error ?? undefined);
}
