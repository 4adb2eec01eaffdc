/**
 * API keys: `aigw_sk_` + 256 random bits, stored as SHA-256, resolved through the KV cache so that a
 * request costs no database round trip once its key is warm.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Database } from '../store/database.ts';
import type { Logger } from '../logger.ts';
import type { KV } from '../store/kv.ts';
import { IdentityCache } from './cache.ts';
import { ParsedTexts } from '../store/parsed-texts.ts';
import { compileRequestSchema, refuseUnstorableText } from '../validation.ts';
import { createApiKeySchema, updateApiKeySchema } from './schemas.ts';
import { listPage, type Page, type PageRequest } from '../store/pagination.ts';
import { GatewayError, validationError } from '../errors.ts';
import { parseRange } from './addresses.ts';
import { recordAdminWrite, type AdminScope } from './admin-audit.ts';
import { outOfScope, requireMembership, tenantInScope, visible } from './directory.ts';
import type { LastUsedRecorder } from './last-used.ts';
import type { RateLimits } from './policy.ts';
import { orderedUuid } from '../store/ids.ts';

export const KEY_PREFIX = 'aigw_sk_';
const CACHE_PREFIX = 'apikey:';

export interface CreateApiKeyInput {
  name: string;
  tenantId?: string;
  organizationId?: string;
  departmentId?: string;
  scopes?: { capabilities?: string[]; providerIds?: string[]; modelIds?: string[] };
  rateLimits?: RateLimits;
  expiresAt?: string;
  allowedIps?: string[];
  metadata?: Record<string, unknown>;
}

export interface ApiKeyRecord {
  id: string;
  object: 'api_key';
  name: string;
  tenantId: string;
  organizationId: string | null;
  departmentId: string | null;
  prefix: string;
  scopes: { capabilities: string[]; providerIds: string[]; modelIds: string[] };
  rateLimits: RateLimits | null;
  expiresAt: string | null;
  allowedIps: string[];
  metadata: Record<string, unknown> | null;
  status: 'active' | 'expired' | 'revoked';
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

/** A record as cached: the hash travels with it so a lookup can be confirmed in constant time. */
interface CachedKey {
  hash: string;
  /** null: no key has this hash (a negative entry, so guessed keys do not reach the database each time). */
  record: ApiKeyRecord | null;
}

interface KeyRow {
  id: string; tenant_id: string; organization_id: string | null; department_id: string | null;
  name: string; key_hash: string; key_prefix: string;
  capabilities: string[]; provider_ids: string[]; model_ids: string[];
  rate_limits: ApiKeyRecord['rateLimits']; expires_at: Date | string | null; allowed_ips: string[];
  metadata: Record<string, unknown> | null; status: ApiKeyRecord['status']; created_at: Date | string;
  revoked_at: Date | string | null; last_used_at: Date | string | null;
}

/** The fields an update may change; null clears rateLimits and expiresAt. */
export interface UpdateApiKeyInput {
  name?: string;
  scopes?: CreateApiKeyInput['scopes'];
  rateLimits?: RateLimits | null;
  expiresAt?: string | null;
  allowedIps?: string[];
  metadata?: Record<string, unknown>;
}

const validateCreate = compileRequestSchema<CreateApiKeyInput>(createApiKeySchema);
const validateUpdate = compileRequestSchema<UpdateApiKeyInput>(updateApiKeySchema);

/** The one-shot digest, without a Hash object: it runs on every authenticated request (0.75 -> 0.3 µs). */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

function iso(value: Date | string | null): string | null {
  if (value === null) return null;
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

function toRecord(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    object: 'api_key',
    name: row.name,
    tenantId: row.tenant_id,
    organizationId: row.organization_id,
    departmentId: row.department_id,
    prefix: row.key_prefix,
    scopes: { capabilities: row.capabilities, providerIds: row.provider_ids, modelIds: row.model_ids },
    rateLimits: row.rate_limits,
    expiresAt: iso(row.expires_at),
    allowedIps: row.allowed_ips,
    metadata: row.metadata,
    status: row.status,
    createdAt: iso(row.created_at)!,
    revokedAt: iso(row.revoked_at),
    lastUsedAt: iso(row.last_used_at),
  };
}

/**
 * An allowedIps entry that is neither an address nor a CIDR range would match no client: the key would refuse
 * every request with a 403 that names the client, not the entry. Refused when written instead.
 */
function refuseUnparsedAddresses(entries: readonly string[] | undefined): void {
  const issues = (entries ?? []).flatMap((entry, i) => (parseRange(entry) ? [] : [{ path: `/allowedIps/${i}`, message: `${JSON.stringify(entry)} is not an IP address or CIDR range` }]));
  if (issues.length > 0) throw validationError(issues);
}

export class ApiKeyService {
  private readonly cache: IdentityCache;
  /** By key hash: the cached text last read and what it parsed to. */
  private readonly parsed = new ParsedTexts<CachedKey>();

  constructor(
    private readonly db: Database,
    kv: KV,
    private readonly cacheTtlMs: number,
    /** Absent in tools that only create keys: nothing records use then. */
    private readonly lastUsed?: LastUsedRecorder,
    logger?: Logger,
  ) {
    this.cache = new IdentityCache(kv, logger);
  }

  /** Validates the spec's creation fields, stores the hash, and returns the record with the key (shown once). */
  async create(input: unknown, scope: AdminScope): Promise<ApiKeyRecord & { key: string }> {
    const fields = validateCreate(input);
    // Checked here too, not only by the admin routes: the service is the last step before SQL for every caller.
    refuseUnstorableText(fields, 'The key');
    refuseUnparsedAddresses(fields.allowedIps);
    const tenantId = tenantInScope(scope, fields.tenantId);
    const key = KEY_PREFIX + randomBytes(32).toString('base64url');
    const id = `key_${orderedUuid()}`;
    const row = await this.db.transaction(async (tx) => {
      await requireMembership(tx, { tenantId, organizationId: fields.organizationId, departmentId: fields.departmentId });
      const [inserted] = await tx.query<KeyRow>(
        `INSERT INTO api_keys (id, tenant_id, organization_id, department_id, name, key_hash, key_prefix, capabilities,
           provider_ids, model_ids, rate_limits, expires_at, allowed_ips, metadata)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING *`,
        [
          id, tenantId, fields.organizationId ?? null, fields.departmentId ?? null, fields.name, hashKey(key),
          key.slice(0, KEY_PREFIX.length + 4),
          fields.scopes?.capabilities ?? ['chat'], fields.scopes?.providerIds ?? [], fields.scopes?.modelIds ?? [],
          fields.rateLimits ? JSON.stringify(fields.rateLimits) : null, fields.expiresAt ?? null,
          fields.allowedIps ?? [], fields.metadata ? JSON.stringify(fields.metadata) : null,
        ],
      );
      await recordAdminWrite(tx, { actor: scope.actor, action: 'create', targetType: 'api_key', targetId: id, details: { name: fields.name, tenantId } });
      return inserted!;
    });
    return { ...toRecord(row), key };
  }

  /** The record for a presented key, or null when no such key exists. Status is the caller's to judge. */
  async lookup(presented: string): Promise<ApiKeyRecord | null> {
    const hash = hashKey(presented);
    const cached = await this.cache.get(CACHE_PREFIX + hash);
    if (cached) return this.fromCache(hash, cached);
    const [row] = await this.db.query<KeyRow>('SELECT * FROM api_keys WHERE key_hash = $1', [hash]);
    const record = row && sameHash(row.key_hash, hash) ? toRecord(row) : null;
    await this.cache.set(CACHE_PREFIX + hash, JSON.stringify({ hash, record } satisfies CachedKey), this.cacheTtlMs);
    return record;
  }

  /**
   * lookup answered within the call when the key's entry is in the in-process KV; undefined when it is not
   * (absent, or a KV that answers with a promise): lookup then reads it, or the database.
   */
  lookupNow(hash: string): ApiKeyRecord | null | undefined {
    const cached = this.cache.getNow(CACHE_PREFIX + hash);
    return cached ? this.fromCache(hash, cached) : undefined;
  }

  private fromCache(hash: string, cached: string): ApiKeyRecord | null {
    const entry = this.parsed.get(hash, cached);
    return sameHash(entry.hash, hash) ? entry.record : null;
  }

  /** Notes that a key was used now; written to the database in batches, not per request. */
  touch(record: ApiKeyRecord, at: number): void {
    this.lastUsed?.record(record.id, at);
  }

  /** Writes the pending last-used times now (they are otherwise written every auth.lastUsedFlushIntervalMs). */
  async flushLastUsed(): Promise<void> {
    await this.lastUsed?.flush();
  }

  /** Records that an active key has passed its expiry (detected on use), and drops it from the cache. */
  async markExpired(record: ApiKeyRecord): Promise<void> {
    const [row] = await this.db.query<{ key_hash: string }>(
      `UPDATE api_keys SET status = 'expired' WHERE id = $1 AND status = 'active' RETURNING key_hash`, [record.id]);
    if (row) await this.cache.drop(CACHE_PREFIX + row.key_hash);
  }

  /** Revokes a key; the cache entry goes at once, so every instance sharing the KV refuses it from now on. */
  async revoke(id: string, scope: AdminScope): Promise<ApiKeyRecord> {
    const row = await this.db.transaction(async (tx) => {
      const [current] = await tx.query<KeyRow>('SELECT * FROM api_keys WHERE id = $1 FOR UPDATE', [id]);
      if (!current || !visible(scope, current.tenant_id)) throw notFound(id);
      if (current.status === 'revoked') return current;
      const [updated] = await tx.query<KeyRow>(
        `UPDATE api_keys SET status = 'revoked', revoked_at = now() WHERE id = $1 RETURNING *`, [id]);
      await recordAdminWrite(tx, { actor: scope.actor, action: 'revoke', targetType: 'api_key', targetId: id });
      return updated!;
    });
    await this.cache.invalidate(CACHE_PREFIX + row.key_hash, `The revocation of ${id}`);
    return toRecord(row);
  }

  /**
   * Changes a key's limits, addresses, capabilities, expiry, name or metadata. Like a revocation, the cache entry
   * goes at once, so the next request on every instance sharing the KV sees the new values.
   */
  async update(id: string, input: unknown, scope: AdminScope): Promise<ApiKeyRecord> {
    const fields = validateUpdate(input);
    refuseUnstorableText(fields, 'The key');
    refuseUnparsedAddresses(fields.allowedIps);
    const row = await this.db.transaction(async (tx) => {
      const [current] = await tx.query<KeyRow>('SELECT * FROM api_keys WHERE id = $1 FOR UPDATE', [id]);
      if (!current || !visible(scope, current.tenant_id)) throw notFound(id);
      if (current.status === 'revoked') throw new GatewayError('VALIDATION_ERROR', `API key ${id} is revoked: create a new key instead`, { id });
      const expiresAt = fields.expiresAt === undefined ? current.expires_at : fields.expiresAt;
      // A key marked expired comes back when its expiry moves past now (or goes); the reverse is judged on use.
      const status = current.status === 'expired' && (expiresAt === null || Date.parse(iso(expiresAt)!) > Date.now()) ? 'active' : current.status;
      const [updated] = await tx.query<KeyRow>(
        `UPDATE api_keys SET name = $2, capabilities = $3, provider_ids = $4, model_ids = $5, rate_limits = $6,
           expires_at = $7, allowed_ips = $8, metadata = $9, status = $10 WHERE id = $1 RETURNING *`,
        [
          id, fields.name ?? current.name,
          fields.scopes?.capabilities ?? current.capabilities, fields.scopes?.providerIds ?? current.provider_ids,
          fields.scopes?.modelIds ?? current.model_ids,
          fields.rateLimits === undefined ? jsonOrNull(current.rate_limits) : jsonOrNull(fields.rateLimits),
          expiresAt, fields.allowedIps ?? current.allowed_ips,
          fields.metadata === undefined ? jsonOrNull(current.metadata) : jsonOrNull(fields.metadata), status,
        ],
      );
      await recordAdminWrite(tx, { actor: scope.actor, action: 'update', targetType: 'api_key', targetId: id, details: { fields: Object.keys(fields) } });
      return updated!;
    });
    await this.cache.invalidate(CACHE_PREFIX + row.key_hash, `The update of ${id}`);
    return toRecord(row);
  }

  async get(id: string, scope: AdminScope): Promise<ApiKeyRecord> {
    const [row] = await this.db.query<KeyRow>('SELECT * FROM api_keys WHERE id = $1', [id]);
    if (!row || !visible(scope, row.tenant_id)) throw notFound(id);
    return toRecord(row);
  }

  async listPage(page: PageRequest, scope: AdminScope, filter: { tenantId?: string } = {}): Promise<Page<ApiKeyRecord>> {
    const tenantId = scope.tenantId ?? filter.tenantId;
    if (scope.tenantId && filter.tenantId && filter.tenantId !== scope.tenantId) throw outOfScope(filter.tenantId);
    return listPage<KeyRow, ApiKeyRecord>(this.db, {
      table: 'api_keys',
      where: tenantId ? ['tenant_id = $1'] : [],
      params: tenantId ? [tenantId] : [],
      page,
      toItem: toRecord,
    });
  }

  async list(tenantId?: string): Promise<ApiKeyRecord[]> {
    const rows = tenantId
      ? await this.db.query<KeyRow>('SELECT * FROM api_keys WHERE tenant_id = $1 ORDER BY created_at, id', [tenantId])
      : await this.db.query<KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id');
    return rows.map(toRecord);
  }
}

const jsonOrNull = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

const notFound = (id: string) => new GatewayError('NOT_FOUND', `No API key ${id}`, { id });

function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

