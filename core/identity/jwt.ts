/**
 * Session JWTs: HS256 only (the algorithm is pinned, so `none` and asymmetric algorithms are refused), with
 * the claims sub, tenantId, type = access and jti all required, and a revocation blocklist in the KV that
 * every request checks. The database keeps the blocklist's durable copy.
 */
import { GatewayError } from '../errors.ts';
import type { Database } from '../store/database.ts';
import type { Logger } from '../logger.ts';
import type { KV } from '../store/kv.ts';
import { IdentityCache } from './cache.ts';
import { compileRequestSchema } from '../validation.ts';
import { recordAdminWrite, type AdminScope } from './admin-audit.ts';
import { jwtRevocationSchema } from './schemas.ts';

export interface JwtIdentity {
  sub: string;
  tenantId: string;
  jti: string;
  role: string | null;
  organizationId: string | null;
  departmentId: string | null;
}

// jose loads with the first JWT to verify: most gateways authenticate with API keys only.
let jose: Promise<typeof import('jose')> | undefined;

const revokedKey = (jti: string) => `jwt:revoked:${jti}`;

const invalid = (message: string, reason: string) => new GatewayError('AUTH_INVALID_TOKEN', message, { reason });

function stringClaim(payload: Record<string, unknown>, name: string, required: boolean): string | null {
  const value = payload[name];
  if (value === undefined && !required) return null;
  if (typeof value !== 'string' || value === '') throw invalid(`JWT claim "${name}" must be a non-empty string`, `claim_${name}`);
  // Claims are looked up in SQL, which cannot hold U+0000: a token carrying one is invalid, not a server fault.
  if (value.includes('\u0000')) throw invalid(`JWT claim "${name}" must not contain the character U+0000`, `claim_${name}`);
  return value;
}

export class JwtVerifier {
  private readonly key: Uint8Array;

  constructor(
    secret: string,
    private readonly revocations: Pick<JwtRevocations, 'isRevoked'>,
    private readonly now: () => number,
    private readonly clockToleranceSeconds: number,
  ) {
    this.key = new TextEncoder().encode(secret);
  }

  /** The identity in a valid, unexpired, unrevoked access token; otherwise a 401 GatewayError. */
  async verify(token: string): Promise<JwtIdentity> {
    let payload: Record<string, unknown>;
    const { errors, jwtVerify } = await (jose ??= import('jose'));
    try {
      ({ payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        currentDate: new Date(this.now()),
        clockTolerance: this.clockToleranceSeconds,
      }));
    } catch (err) {
      if (err instanceof errors.JWTExpired) throw new GatewayError('AUTH_TOKEN_EXPIRED', 'JWT has expired');
      throw invalid('JWT is invalid or malformed', err instanceof errors.JOSEError ? err.code : 'malformed');
    }
    const identity: JwtIdentity = {
      sub: stringClaim(payload, 'sub', true)!,
      tenantId: stringClaim(payload, 'tenantId', true)!,
      jti: stringClaim(payload, 'jti', true)!,
      role: stringClaim(payload, 'role', false),
      organizationId: stringClaim(payload, 'organizationId', false),
      departmentId: stringClaim(payload, 'departmentId', false),
    };
    if (payload.type !== 'access') throw invalid('JWT claim "type" must be "access"', 'claim_type');
    if (await this.revocations.isRevoked(identity.jti)) throw invalid('JWT has been revoked', 'revoked');
    return identity;
  }
}

export interface JwtRevocation {
  object: 'jwt_revocation';
  jti: string;
  expiresAt: string | null;
  revokedAt: string;
}

const validateRevocation = compileRequestSchema<{ jti: string; expiresAt?: string }>(jwtRevocationSchema);

export class JwtRevocations {
  private readonly cache: IdentityCache;

  constructor(private readonly db: Database, private readonly kv: KV, private readonly now: () => number, logger?: Logger) {
    this.cache = new IdentityCache(kv, logger);
  }

  /** The KV's blocklist; when the KV cannot answer, its durable copy in the database does. */
  async isRevoked(jti: string): Promise<boolean> {
    const flag = await this.cache.get(revokedKey(jti));
    if (flag !== undefined) return flag !== null;
    const [row] = await this.db.query(
      'SELECT 1 FROM jwt_revocations WHERE jti = $1 AND (expires_at IS NULL OR expires_at > now() - interval \'1 minute\')', [jti]);
    return Boolean(row);
  }

  async revoke(input: unknown, scope: AdminScope): Promise<JwtRevocation> {
    const fields = validateRevocation(input);
    const row = await this.db.transaction(async (tx) => {
      // Revoking again may lengthen the entry, never shorten it: a later call must not undo a revocation.
      const [saved] = await tx.query<{ jti: string; expires_at: Date | string | null; revoked_at: Date | string }>(
        `INSERT INTO jwt_revocations (jti, tenant_id, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT (jti) DO UPDATE SET expires_at = CASE
           WHEN jwt_revocations.expires_at IS NULL OR EXCLUDED.expires_at IS NULL THEN NULL
           ELSE GREATEST(jwt_revocations.expires_at, EXCLUDED.expires_at) END
         RETURNING *`,
        [fields.jti, scope.tenantId, fields.expiresAt ?? null]);
      await recordAdminWrite(tx, { actor: scope.actor, action: 'revoke', targetType: 'jwt', targetId: fields.jti });
      return saved!;
    });
    try {
      await this.block(fields.jti, row.expires_at);
    } catch {
      throw new GatewayError('STORE_UNAVAILABLE', `The revocation of ${fields.jti} is saved, but the KV could not be told: instances whose KV answers still accept the token. Repeat the request once the KV answers.`);
    }
    return {
      object: 'jwt_revocation',
      jti: row.jti,
      expiresAt: row.expires_at === null ? null : new Date(row.expires_at).toISOString(),
      revokedAt: new Date(row.revoked_at).toISOString(),
    };
  }

  /** Copies the durable blocklist into the KV at start: an in-memory KV begins empty. */
  async load(): Promise<number> {
    const rows = await this.db.query<{ jti: string; expires_at: Date | string | null }>(
      'SELECT jti, expires_at FROM jwt_revocations WHERE expires_at IS NULL OR expires_at > now()');
    for (const row of rows) await this.block(row.jti, row.expires_at);
    return rows.length;
  }

  private async block(jti: string, expiresAt: Date | string | null): Promise<void> {
    if (expiresAt === null) return this.kv.set(revokedKey(jti), '1');
    const ttl = new Date(expiresAt).getTime() - this.now();
    // A token past its expiry is refused as expired anyway; keep the entry a minute for clock skew.
    await this.kv.set(revokedKey(jti), '1', Math.max(ttl, 0) + 60_000);
  }
}
