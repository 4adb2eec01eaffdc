import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { upstreamStatusError } from '../../core/dispatch/upstream-errors.ts';
import type { GatewayError } from '../../core/errors.ts';

/** watsonx.ai answers errors as {errors: [{code, message, more_info}], trace, status_code}. */
export function watsonxError(target: ProviderTarget, status: number, body: unknown): GatewayError {
  const b = body as { errors?: Array<{ code?: unknown; message?: unknown }>; message?: unknown; error?: unknown } | null;
  const first = Array.isArray(b?.errors) ? b.errors[0] : undefined;
  const message = typeof first?.message === 'string' ? first.message
    : typeof b?.message === 'string' ? b.message
    : typeof b?.error === 'string' ? b.error
    : typeof body === 'string' && body !== '' ? body.slice(0, 500)
    : `HTTP ${status}`;
  return upstreamStatusError(target.slug, status, message, first ?? (body && typeof body === 'object' ? body : undefined));
}
