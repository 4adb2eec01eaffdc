import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { upstreamStatusError } from '../../core/dispatch/upstream-errors.ts';
import type { GatewayError } from '../../core/errors.ts';

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.length > 0 ? value : undefined);

/**
 * The message of an error body in this family. OpenAI answers `{error: {message, type, code, param}}`; the
 * compatible servers vary: `{error: "text"}` (Hugging Face), top-level `{message}` (Mistral, vLLM, Azure's API
 * management), `{errors: [{message}]}` (Cloudflare), FastAPI's `{detail}`; a message may itself be an object.
 */
export function errorMessageOf(body: unknown, status: number): string {
  if (typeof body === 'string') return body.length > 0 ? body.slice(0, 500) : `HTTP ${status}`;
  const b = (body ?? {}) as { error?: unknown; message?: unknown; errors?: unknown; detail?: unknown };
  const error = b.error as { message?: unknown } | string | undefined;
  const first = Array.isArray(b.errors) ? (b.errors[0] as { message?: unknown } | undefined) : undefined;
  const detail = Array.isArray(b.detail) ? (b.detail[0] as { msg?: unknown } | undefined)?.msg : b.detail;
  const found = (typeof error === 'object' && error ? text(error.message) ?? objectText(error.message) : text(error))
    ?? text(b.message) ?? objectText(b.message) ?? text(first?.message) ?? text(detail);
  return found ?? `HTTP ${status}`;
}

function objectText(value: unknown): string | undefined {
  return value && typeof value === 'object' ? JSON.stringify(value).slice(0, 500) : undefined;
}

/** OpenAI answers errors as {error: {message, type, code, param}}; others in this family do too, mostly. */
export function openaiErrorFromBody(target: ProviderTarget, status: number, body: unknown): GatewayError {
  const error = (body as { error?: unknown } | null)?.error;
  return upstreamStatusError(target.slug, status, errorMessageOf(body, status), error ?? (isObject(body) ? body : undefined));
}

const isObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object';
