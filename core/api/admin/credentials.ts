/**
 * Who may use /admin/v1: the bearer of AIGW_ADMIN_TOKEN (every tenant), the local control token a running
 * gateway leaves in its data folder for the CLI (every tenant), or a JWT with role `admin` (its own tenant).
 * A JWT from the access_token cookie writes only from the gateway's own origin (identity/cross-site.ts).
 */
import type { Context, Next } from 'koa';
import { GatewayError } from '../../errors.ts';
import { FULL_ADMIN, type AdminScope } from '../../identity/admin-audit.ts';
import type { Authenticator } from '../../identity/authenticate.ts';
import { bearerToken, matchesSecret, secretDigest } from '../../identity/bearer.ts';
import { refuseCrossSiteCookieWrite } from '../../identity/cross-site.ts';

export interface AdminCredentials {
  adminToken?: string | undefined;
  controlToken?: string | undefined;
  /** Set when JWT authentication is on: JWTs with role admin are accepted. */
  authenticator?: Authenticator | undefined;
}

/** Whether the admin API (and the UI that calls it) is on: an admin token, or admin JWTs. */
export function adminApiOn(credentials: Pick<AdminCredentials, 'adminToken' | 'authenticator'>): boolean {
  return Boolean(credentials.adminToken || credentials.authenticator);
}

/**
 * With neither AIGW_ADMIN_TOKEN nor JWTs the admin API is off: it answers 404 to everyone but the holder of
 * the control token, which only a process that can read the data folder has.
 */
export function adminAuth(credentials: AdminCredentials) {
  const tokens: Array<[Buffer, string]> = [];
  if (credentials.adminToken) tokens.push([secretDigest(credentials.adminToken), 'admin-token']);
  if (credentials.controlToken) tokens.push([secretDigest(credentials.controlToken), 'cli']);
  const enabled = adminApiOn(credentials);

  return async (ctx: Context, next: Next) => {
    const bearer = bearerToken(ctx.get('authorization'));
    let scope: AdminScope | undefined;
    if (bearer !== undefined) {
      const actor = tokens.find(([token]) => matchesSecret(bearer, token))?.[1];
      if (actor) scope = FULL_ADMIN(actor);
    }
    if (!scope) {
      if (!enabled) throw new GatewayError('NOT_FOUND', 'The admin API is off: set AIGW_ADMIN_TOKEN (or AIGW_JWT_SECRET for admin JWTs) to turn it on');
      scope = await jwtScope(ctx, bearer, credentials.authenticator);
    }
    ctx.state.adminScope = scope;
    await next();
  };
}

async function jwtScope(ctx: Context, bearer: string | undefined, authenticator: Authenticator | undefined): Promise<AdminScope> {
  const token = bearer ?? ctx.cookies.get('access_token');
  if (!token) throw new GatewayError('AUTH_REQUIRED', 'Admin API requires Authorization: Bearer <admin token or admin JWT>');
  if (bearer === undefined) refuseCrossSiteCookieWrite(ctx);
  if (!authenticator || token.split('.').length !== 3) throw new GatewayError('AUTH_INVALID_TOKEN', 'Invalid admin token');
  const caller = await authenticator.authenticate({ kind: 'jwt', value: token });
  if (caller.role !== 'admin') throw new GatewayError('AUTH_FORBIDDEN', 'The admin API needs a JWT with role "admin"', { requiredRole: 'admin' });
  return { actor: `jwt:${caller.id}`, tenantId: caller.tenantId };
}
