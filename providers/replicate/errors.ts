import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { upstreamStatusError } from '../../core/dispatch/upstream-errors.ts';
import type { GatewayError } from '../../core/errors.ts';

/** Replicate answers errors as problem details: {title, detail, status} (sometimes only {detail}). */
export function replicateError(target: ProviderTarget, status: number, body: unknown): GatewayError {
  const b = body as { detail?: unknown; title?: unknown } | null;
  const message = typeof b?.detail === 'string' && b.detail !== '' ? b.detail
    : typeof b?.title === 'string' && b.title !== '' ? b.title
    : typeof body === 'string' && body !== '' ? body.slice(0, 500)
    : `HTTP ${status}`;
  return upstreamStatusError(target.slug, status, message, body && typeof body === 'object' ? body : undefined);
}
