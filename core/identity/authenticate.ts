/**
 * Who is calling: the credential a request presents, and the caller it stands for. API keys come from
 * `Authorization: Bearer` or `x-api-key` (Authorization wins); JWTs from `Authorization: Bearer` or the
 * `access_token` cookie. A JWT in x-api-key is ignored, as the spec says.
 */
import { GatewayError } from '../errors.ts';
import type { Caller, Credential } from '../pipeline/caller.ts';
import { KEY_PREFIX, type ApiKeyService } from './api-keys.ts';
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

  private async apiKeyCaller(presented: string): Promise<Caller> {
    const { apiKeys, directory, now } = this.deps;
    const key = await apiKeys.lookup(presented);
    if (!key) throw new GatewayError('AUTH_INVALID_API_KEY', 'Invalid API key');
    if (key.status === 'revoked') throw new GatewayError('AUTH_API_KEY_REVOKED', 'API key has been revoked');
    if (key.status === 'expired' || (key.expiresAt !== null && Date.parse(key.expiresAt) <= now())) {
      if (key.status === 'active') await apiKeys.markExpired(key);
      throw new GatewayError('AUTH_API_KEY_EXPIRED', 'API key has expired');
    }
    const policy = await directory.policyFor(key);
    if (!policy) throw new GatewayError('AUTH_FORBIDDEN', 'The organization or department of this API key no longer exists');
    apiKeys.touch(key, now());
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
