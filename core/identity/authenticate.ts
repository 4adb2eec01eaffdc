/**
 * Who is calling: the credential a request presents, and the caller it stands for. API keys come from
 * `Authorization: Bearer` or `x-api-key` (Authorization wins); JWTs from `Authorization: Bearer` or the
 * `access_token` cookie. A JWT in x-api-key is ignored, as the spec says.
 */
import { GatewayError } from '../errors.ts';
import type { Caller, Credential, EffectivePolicy } from '../pipeline/caller.ts';
import { hashKey, KEY_PREFIX, type ApiKeyRecord, type ApiKeyService } from './api-keys.ts';
import { bearerToken } from './bearer.ts';
import type { Directory } from './directory.ts';
import type { JwtIdentity, JwtVerifier } from './jwt.ts';

export type { Credential };

export interface PresentedHeaders {
  authorization?: string | undefined;
  apiKey?: string | undefined;
  accessTokenCookie?: string | undefined;
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/;

function classify(value: string): Credential | null {
  if (value.startsWith(KEY_PREFIX)) return { kind: 'api_key', value };
  if (JWT_SHAPE.test(value)) return { kind: 'jwt', value };
  return null;
}

/** The credential to check, or null when none was sent. A bearer of no known shape is an invalid API key. */
export function presentedCredential(headers: PresentedHeaders): Credential | null {
  if (headers.authorization) {
    const token = bearerToken(headers.authorization);
    if (token === undefined) throw new GatewayError('AUTH_INVALID_API_KEY', 'Authorization header must be "Bearer <credential>"');
    const credential = classify(token);
    if (!credential) throw new GatewayError('AUTH_INVALID_API_KEY', 'Invalid API key');
    return credential;
  }
  const apiKey = headers.apiKey?.trim();
  if (apiKey) {
    const credential = classify(apiKey);
    if (!credential) throw new GatewayError('AUTH_INVALID_API_KEY', 'Invalid API key');
    if (credential.kind === 'api_key') return credential;
  }
  const cookie = headers.accessTokenCookie?.trim();
  if (cookie) return { kind: 'jwt', value: cookie };
  return null;
}

export interface AuthenticatorDeps {
  apiKeys: ApiKeyService;
  directory: Directory;
  /** null when JWT authentication is off (no secret). */
  jwt: JwtVerifier | null;
  /** What JWT callers may do: auth.jwt.capabilities. */
  jwtCapabilities: readonly string[];
  now: () => number;
}

const expired = (key: ApiKeyRecord, at: number): boolean => key.expiresAt !== null && Date.parse(key.expiresAt) <= at;

/** An unknown, revoked or expired key is refused (an active key past its expiry is marked expired first). */
function refuseUnusable(key: ApiKeyRecord | null, at: number): asserts key is ApiKeyRecord {
  if (!key) throw new GatewayError('AUTH_INVALID_API_KEY', 'Invalid API key');
  if (key.status === 'revoked') throw new GatewayError('AUTH_API_KEY_REVOKED', 'API key has been revoked');
  if (key.status === 'expired' || expired(key, at)) throw new GatewayError('AUTH_API_KEY_EXPIRED', 'API key has expired');
}

export class Authenticator {
  constructor(private readonly deps: AuthenticatorDeps) {}

  async authenticate(credential: Credential): Promise<Caller> {
    return credential.kind === 'api_key' ? this.apiKeyCaller(credential.value) : this.jwtCaller(await this.verifyJwt(credential.value));
  }

  /** A verified JWT identity (the admin API reads its role). */
  async verifyJwt(token: string): Promise<JwtIdentity> {
    if (!this.deps.jwt) throw new GatewayError('AUTH_INVALID_TOKEN', 'JWT authentication is not enabled on this gateway', { reason: 'jwt_disabled' });
    return this.deps.jwt.verify(token);
  }

  /**
   * authenticate answered within the call: an API key whose entry (and its units') is in the in-process KV, and
   * that needs no write (a key found expired is marked so by authenticate). Undefined otherwise: authenticate then
   * answers. Throws as authenticate rejects.
   */
  authenticateNow(credential: Credential): Caller | undefined {
    if (credential.kind !== 'api_key') return undefined;
    const { apiKeys, directory, now } = this.deps;
    const key = apiKeys.lookupNow(hashKey(credential.value));
    if (key === undefined) return undefined;
    const at = now();
    if (key && key.status === 'active' && expired(key, at)) return undefined;
    refuseUnusable(key, at);
    const policy = directory.policyForNow(key);
    return policy === undefined ? undefined : this.keyCaller(key, policy, at);
  }

  private async apiKeyCaller(presented: string): Promise<Caller> {
    const { apiKeys, directory, now } = this.deps;
    const key = await apiKeys.lookup(presented);
    const at = now();
    if (key && key.status === 'active' && expired(key, at)) await apiKeys.markExpired(key);
    refuseUnusable(key, at);
    return this.keyCaller(key, await directory.policyFor(key), at);
  }

  private keyCaller(key: ApiKeyRecord, policy: EffectivePolicy | null, at: number): Caller {
    if (!policy) throw new GatewayError('AUTH_FORBIDDEN', 'The organization or department of this API key no longer exists');
    this.deps.apiKeys.touch(key, at);
    return {
      kind: 'api_key',
      id: key.id,
      tenantId: key.tenantId,
      organizationId: key.organizationId,
      departmentId: key.departmentId,
      capabilities: key.scopes.capabilities,
      allowedIps: key.allowedIps,
      rateLimits: key.rateLimits,
      role: null,
      policy,
    };
  }

  private async jwtCaller(identity: JwtIdentity): Promise<Caller> {
    const { directory } = this.deps;
    if (!(await directory.tenantExists(identity.tenantId))) {
      throw new GatewayError('AUTH_INVALID_TOKEN', `JWT names tenant "${identity.tenantId}", which does not exist`, { reason: 'unknown_tenant' });
    }
    const policy = await directory.policyFor(identity);
    if (!policy) {
      throw new GatewayError('AUTH_INVALID_TOKEN', 'JWT names an organization or department that is not in its tenant', { reason: 'unknown_unit' });
    }
    return {
      kind: 'jwt',
      id: identity.sub,
      tenantId: identity.tenantId,
      organizationId: identity.organizationId,
      departmentId: identity.departmentId,
      capabilities: this.deps.jwtCapabilities,
      allowedIps: [],
      rateLimits: null,
      role: identity.role,
      policy,
    };
  }
}
