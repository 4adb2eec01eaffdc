import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { upstreamStatusError } from '../../core/dispatch/upstream-errors.ts';
import type { GatewayError } from '../../core/errors.ts';

/**
 * Google APIs answer errors as {error: {code, message, status, details}} (inside a one-element array on
 * some stream endpoints). `status` is the HTTP status; an error inside a stream (no status) has its own code.
 */
export function geminiError(target: ProviderTarget, status: number | undefined, body: unknown): GatewayError {
  const wrapped = Array.isArray(body) ? body[0] : body;
  const error = (wrapped as { error?: { code?: unknown; message?: unknown; status?: unknown } } | null)?.error;
  const message = typeof error?.message === 'string' ? error.message
    : typeof body === 'string' && body.length > 0 ? body.slice(0, 500)
    : `HTTP ${status ?? 500}`;
  const code = status ?? (typeof error?.code === 'number' && error.code >= 400 ? error.code : 500);
  return upstreamStatusError(target.slug, code, message, error ?? undefined);
}
