/**
 * Vertex AI takes an OAuth access token as a Bearer credential: either a token the operator supplies (apiKey,
 * e.g. from `gcloud auth print-access-token`) or one the gateway gets itself for a service account, by
 * signing a JWT assertion (RS256) and exchanging it at the key's token_uri (RFC 7523), cached until it expires.
 */
import { sign } from 'node:crypto';
import type { ProviderIO, ProviderTarget, UpstreamRequest } from '../../core/dispatch/provider.ts';
import { upstreamStatusError } from '../../core/dispatch/upstream-errors.ts';
import { GatewayError } from '../../core/errors.ts';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const DEFAULT_TOKEN_URI = 'https://oauth2.googleapis.com/token';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Google accepts assertions valid for at most an hour. */
const ASSERTION_LIFETIME_S = 3600;

export interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri: string;
}

function configError(target: ProviderTarget, message: string): GatewayError {
  return new GatewayError('UPSTREAM_ERROR', `${target.slug}: ${message}`, { provider: target.slug });
}

/** options.serviceAccountKey: the key file's JSON, as an object or as text (an ${ENV} reference holds text). */
export function serviceAccountKey(target: ProviderTarget): ServiceAccountKey | undefined {
  let raw = target.options.serviceAccountKey;
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw === 'string') {
    try {
      raw = JSON.parse(raw) as unknown;
    } catch {
      throw configError(target, 'options.serviceAccountKey is not JSON (expected a service-account key file)');
    }
  }
  const key = raw as Partial<ServiceAccountKey> | null;
  if (!key || typeof key.client_email !== 'string' || typeof key.private_key !== 'string') {
    throw configError(target, 'options.serviceAccountKey needs client_email and private_key (a service-account key file)');
  }
  return {
    client_email: key.client_email,
    private_key: key.private_key,
    ...(typeof key.private_key_id === 'string' ? { private_key_id: key.private_key_id } : {}),
    token_uri: typeof key.token_uri === 'string' && key.token_uri !== '' ? key.token_uri : DEFAULT_TOKEN_URI,
  };
}

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

export function signedAssertion(key: ServiceAccountKey, nowMs: number): string {
  const iat = Math.floor(nowMs / 1000);
  const header = { alg: 'RS256', typ: 'JWT', ...(key.private_key_id ? { kid: key.private_key_id } : {}) };
  const claims = { iss: key.client_email, scope: CLOUD_PLATFORM_SCOPE, aud: key.token_uri, iat, exp: iat + ASSERTION_LIFETIME_S };
  const unsigned = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  let signature: Buffer;
  try {
    signature = sign('sha256', Buffer.from(unsigned), key.private_key);
  } catch {
    throw new GatewayError('UPSTREAM_ERROR', 'the service-account private_key cannot sign (not an RSA private key in PEM)', {});
  }
  return `${unsigned}.${base64url(signature)}`;
}

async function exchange(target: ProviderTarget, key: ServiceAccountKey, io: ProviderIO, signal: AbortSignal): Promise<{ value: string; expiresAt: number }> {
  const requestedAt = io.now();
  const body = new URLSearchParams({ grant_type: JWT_BEARER, assertion: signedAssertion(key, requestedAt) }).toString();
  const answer = await io.fetchJson(key.token_uri, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body }, signal);
  const token = answer.body as { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } | null;
  if (answer.status >= 400 || typeof token?.access_token !== 'string') {
    const reason = typeof token?.error_description === 'string' ? token.error_description : typeof token?.error === 'string' ? token.error : `HTTP ${answer.status}`;
    // A refused assertion is the gateway's credential, never the caller's request: 4xx reads as 401.
    const status = answer.status >= 500 || answer.status === 429 ? answer.status : 401;
    throw upstreamStatusError(target.slug, status, `service-account token exchange failed: ${reason}`, token ?? undefined);
  }
  const lifetimeS = typeof token.expires_in === 'number' && token.expires_in > 0 ? token.expires_in : ASSERTION_LIFETIME_S;
  return { value: token.access_token, expiresAt: requestedAt + lifetimeS * 1000 };
}

export async function authorizeVertex(request: UpstreamRequest, target: ProviderTarget, io: ProviderIO, signal: AbortSignal): Promise<UpstreamRequest> {
  const key = serviceAccountKey(target);
  let token: string;
  if (key) {
    token = await io.cached(`${target.slug}:${key.token_uri}:${key.client_email}`, (shared) => exchange(target, key, io, shared));
  } else if (target.apiKey) {
    token = target.apiKey;
  } else {
    throw configError(target, 'no credential: set apiKey (an OAuth access token) or options.serviceAccountKey');
  }
  return { ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } };
}
