import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { upstreamStatusError } from '../../core/dispatch/upstream-errors.ts';
import type { GatewayError } from '../../core/errors.ts';
import { errorMessageOf } from '../openai/errors.ts';

interface AzureError {
  code?: string;
  message?: string;
  innererror?: { code?: string; content_filter_result?: unknown };
}

/**
 * Azure's error bodies: OpenAI's `{error: {code, message}}` with Azure codes (DeploymentNotFound,
 * content_filter with `innererror.content_filter_result` naming the categories that tripped), or, from its
 * API management layer, `{statusCode, message}`. A content-filter refusal (400) says so in its message, and
 * the filter results stay in details.upstreamError.
 */
export function azureErrorFromBody(target: ProviderTarget, status: number, body: unknown): GatewayError {
  const error = (body as { error?: AzureError } | null)?.error;
  let message = errorMessageOf(body, status);
  const filtered = error?.code === 'content_filter' || error?.innererror?.code === 'ResponsibleAIPolicyViolation';
  if (filtered) message = `content filter: ${message}`;
  else if (error?.code && typeof error.code === 'string' && !/^\d+$/.test(error.code)) message = `${error.code}: ${message}`;
  return upstreamStatusError(target.slug, status, message, error ?? (body && typeof body === 'object' ? body : undefined));
}
