/**
 * watsonx.ai takes no API key on its own endpoints: the key is exchanged at IBM Cloud IAM for a bearer token
 * (about an hour long), cached by the gateway until shortly before its `expiration` and shared by concurrent
 * requests.
 */
import { createHash } from 'node:crypto';
import type { ProviderIO, ProviderTarget } from '../../core/dispatch/provider.ts';
import { isAbort, upstreamStatusError } from '../../core/dispatch/upstream-errors.ts';
import { GatewayError } from '../../core/errors.ts';

export const DEFAULT_IAM_URL = 'https://iam.cloud.ibm.com/identity/token';
const GRANT_TYPE = 'urn:ibm:params:oauth:grant-type:apikey';

function iamMessage(body: unknown, status: number): string {
  const b = body as { errorMessage?: unknown; errorCode?: unknown } | null;
  if (typeof b?.errorMessage === 'string') return typeof b.errorCode === 'string' ? `${b.errorCode}: ${b.errorMessage}` : b.errorMessage;
  return typeof body === 'string' && body !== '' ? body.slice(0, 300) : `HTTP ${status}`;
}

/** IAM refusing the key is the gateway's credential being wrong, whatever 4xx it says it with. */
function refused(target: ProviderTarget, status: number, body: unknown): GatewayError {
  const message = `IBM Cloud IAM token exchange failed: ${iamMessage(body, status)}`;
  const upstreamError = body && typeof body === 'object' ? body : undefined;
  if (status === 408 || status === 429 || status >= 500) return upstreamStatusError(target.slug, status, message, upstreamError);
  return new GatewayError('UPSTREAM_ERROR', `${target.slug}: IBM Cloud IAM refused the gateway's API key (HTTP ${status}): ${iamMessage(body, status)}`, {
    provider: target.slug, upstreamStatus: status, ...(upstreamError ? { upstreamError } : {}),
  });
}

function unreachable(target: ProviderTarget, url: string, err: unknown): GatewayError {
  const e = err as { code?: string; message?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code;
  const timedOut = code !== undefined && /TIMEOUT|ETIMEDOUT/.test(code);
  return new GatewayError(timedOut ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_ERROR', `${target.slug}: the IBM Cloud IAM token endpoint ${url} could not be reached (${code ?? e.message ?? 'connection failed'})`, { provider: target.slug });
}

export async function iamToken(target: ProviderTarget, io: ProviderIO): Promise<string> {
  const url = (target.options.iamUrl as string | undefined) ?? DEFAULT_IAM_URL;
  const apiKey = target.apiKey;
  if (!apiKey) throw new GatewayError('UPSTREAM_ERROR', `${target.slug}: no apiKey is configured to exchange for an IBM Cloud IAM token`, { provider: target.slug });
  // The cache is keyed by a digest, so the key itself is not held twice.
  const cacheKey = `watsonx-iam:${createHash('sha256').update(`${url}\n${apiKey}`).digest('hex')}`;
  return io.cached(cacheKey, async (shared) => {
    let answer: { status: number; body: unknown };
    try {
      answer = await io.fetchJson(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({ grant_type: GRANT_TYPE, apikey: apiKey }).toString(),
      }, shared);
    } catch (err) {
      if (isAbort(err)) throw err;
      throw unreachable(target, url, err);
    }
    if (answer.status < 200 || answer.status >= 300) throw refused(target, answer.status, answer.body);
    const token = answer.body as { access_token?: unknown; expiration?: unknown; expires_in?: unknown } | null;
    if (typeof token?.access_token !== 'string' || token.access_token === '') {
      throw new GatewayError('UPSTREAM_ERROR', `${target.slug}: IBM Cloud IAM answered without an access_token`, { provider: target.slug });
    }
    // `expiration` is absolute (unix seconds); `expires_in` is the fallback, an hour the last resort.
    const expiresAt = typeof token.expiration === 'number' ? token.expiration * 1000
      : io.now() + (typeof token.expires_in === 'number' ? token.expires_in : 3600) * 1000;
    return { value: token.access_token, expiresAt };
  });
}
