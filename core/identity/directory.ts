/**
 * Tenants (deployments), organizations and departments, and the policies that hang on the last two. Requests
 * read policies through the KV (one entry per organization or department, deleted on every write), so a
 * policy change holds at once on every instance sharing the KV.
 */
import { orderedUuid } from '../store/ids.ts';
import { listPage, type Page, type PageRequest } from '../store/pagination.ts';
import { GatewayError, validationError } from '../errors.ts';
import type { Database, Queryable } from '../store/database.ts';
import type { Logger } from '../logger.ts';
import type { KV } from '../store/kv.ts';
import { IdentityCache } from './cache.ts';
import { ParsedTexts } from '../store/parsed-texts.ts';
import { compileRequestSchema } from '../validation.ts';
import { recordAdminWrite, type AdminScope } from './admin-audit.ts';
import { effectivePolicy, policySchema, type EffectivePolicy, type Policy } from './policy.ts';
import { createDepartmentSchema, createOrganizationSchema, createTenantSchema } from './schemas.ts';

export interface Tenant { id: string; object: 'tenant'; name: string; createdAt: string }
export interface Organization {
  id: string; object: 'organization'; tenantId: string; name: string; policy: Policy; createdAt: string; updatedAt: string;
}
export interface Department {
  id: string; object: 'department'; tenantId: string; organizationId: string; name: string; policy: Policy;
  createdAt: string; updatedAt: string;
}

interface UnitRow {
  id: string; tenant_id: string; organization_id?: string; name: string; policy: Policy;
  created_at: Date | string; updated_at: Date | string;
}

const iso = (value: Date | string) => (value instanceof Date ? value : new Date(value)).toISOString();

const toTenant = (row: { id: string; name: string; created_at: Date | string }): Tenant =>
  ({ id: row.id, object: 'tenant', name: row.name, createdAt: iso(row.created_at) });
const toOrganization = (row: UnitRow): Organization => ({
  id: row.id, object: 'organization', tenantId: row.tenant_id, name: row.name, policy: row.policy,
  createdAt: iso(row.created_at), updatedAt: iso(row.updated_at),
});
const toDepartment = (row: UnitRow): Department => ({
  id: row.id, object: 'department', tenantId: row.tenant_id, organizationId: row.organization_id!, name: row.name,
  policy: row.policy, createdAt: iso(row.created_at), updatedAt: iso(row.updated_at),
});

const validateTenant = compileRequestSchema<{ id: string; name: string }>(createTenantSchema);
const validateOrganization = compileRequestSchema<{ name: string; tenantId?: string }>(createOrganizationSchema);
const validateDepartment = compileRequestSchema<{ name: string; organizationId: string }>(createDepartmentSchema);
const validatePolicy = compileRequestSchema<Policy>(policySchema);

/** Whether a scope may see a record of this tenant. */
export const visible = (scope: AdminScope, tenantId: string) => scope.tenantId === null || scope.tenantId === tenantId;

export const outOfScope = (tenantId: string) =>
  new GatewayError('AUTH_FORBIDDEN', `This admin credential may not act on tenant "${tenantId}"`, { tenantId });

/** The tenant a write goes to: the one asked for (default "default"), which a tenant-scoped admin must own. */
export function tenantInScope(scope: AdminScope, requested: string | undefined): string {
  const tenantId = requested ?? scope.tenantId ?? 'default';
  if (!visible(scope, tenantId)) throw outOfScope(tenantId);
  return tenantId;
}

/** Checks that the tenant exists and that the organization and department (when given) belong to it. */
export async function requireMembership(
  tx: Queryable,
  member: { tenantId: string; organizationId?: string | undefined; departmentId?: string | undefined },
): Promise<void> {
  const [tenant] = await tx.query('SELECT id FROM tenants WHERE id = $1', [member.tenantId]);
  if (!tenant) throw validationError([{ path: '/tenantId', message: 'unknown tenant' }], `Tenant "${member.tenantId}" does not exist`);
  if (member.departmentId && !member.organizationId) {
    throw validationError([{ path: '/organizationId', message: 'is required with departmentId' }]);
  }
  if (member.organizationId) {
    const [org] = await tx.query('SELECT id FROM organizations WHERE id = $1 AND tenant_id = $2', [member.organizationId, member.tenantId]);
    if (!org) throw validationError([{ path: '/organizationId', message: `no such organization in tenant "${member.tenantId}"` }]);
  }
  if (member.departmentId) {
    const [dept] = await tx.query('SELECT id FROM departments WHERE id = $1 AND organization_id = $2', [member.departmentId, member.organizationId]);
    if (!dept) throw validationError([{ path: '/departmentId', message: 'no such department in that organization' }]);
  }
}

interface CachedUnit {
  tenantId: string;
  organizationId: string | null;
  policy: Policy;
}

const unitKey = (kind: 'org' | 'dept', id: string) => `directory:${kind}:${id}`;
const tenantKey = (id: string) => `directory:tenant:${id}`;

/** Who a policy is asked for: an API key or a JWT identity. */
type Member = { tenantId: string; organizationId: string | null; departmentId: string | null };

export class Directory {
  private readonly cache: IdentityCache;
  /** Cached units parsed once per text: a key in an organization reads its units on every request. */
  private readonly units = new ParsedTexts<CachedUnit | null>();
  /** The policy of each parsed organization (alone, or with one of its departments), made once: it holds Sets. */
  private readonly policies = new WeakMap<CachedUnit, { alone?: EffectivePolicy; withDepartment: WeakMap<CachedUnit, EffectivePolicy> }>();

  constructor(private readonly db: Database, kv: KV, private readonly cacheTtlMs: number, logger?: Logger) {
    this.cache = new IdentityCache(kv, logger);
  }

  async createTenant(input: unknown, scope: AdminScope): Promise<Tenant> {
    if (scope.tenantId !== null) throw new GatewayError('AUTH_FORBIDDEN', 'Only a deployment-wide admin may create tenants');
    const fields = validateTenant(input);
    const row = await this.db.transaction(async (tx) => {
      const [inserted] = await tx.query<{ id: string; name: string; created_at: Date }>(
        'INSERT INTO tenants (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING *', [fields.id, fields.name]);
      if (!inserted) throw validationError([{ path: '/id', message: 'a tenant with this id exists' }], `Tenant "${fields.id}" exists`);
      await recordAdminWrite(tx, { actor: scope.actor, action: 'create', targetType: 'tenant', targetId: fields.id, details: { name: fields.name } });
      return inserted;
    });
    await this.cache.invalidate(tenantKey(row.id), `Tenant ${row.id}`);
    return toTenant(row);
  }

  async listTenants(page: PageRequest, scope: AdminScope): Promise<Page<Tenant>> {
    return listPage(this.db, {
      table: 'tenants', where: scope.tenantId ? ['id = $1'] : [], params: scope.tenantId ? [scope.tenantId] : [], page, toItem: toTenant,
    });
  }

  async createOrganization(input: unknown, scope: AdminScope): Promise<Organization> {
    const fields = validateOrganization(input);
    const tenantId = tenantInScope(scope, fields.tenantId);
    const id = `org_${orderedUuid()}`;
    const row = await this.db.transaction(async (tx) => {
      await requireMembership(tx, { tenantId });
      const [inserted] = await tx.query<UnitRow>(
        'INSERT INTO organizations (id, tenant_id, name) VALUES ($1, $2, $3) RETURNING *', [id, tenantId, fields.name]);
      await recordAdminWrite(tx, { actor: scope.actor, action: 'create', targetType: 'organization', targetId: id, details: { name: fields.name, tenantId } });
      return inserted!;
    });
    return toOrganization(row);
  }

  async createDepartment(input: unknown, scope: AdminScope): Promise<Department> {
    const fields = validateDepartment(input);
    const organization = await this.getOrganization(fields.organizationId, scope).catch((err: unknown) => {
      if (err instanceof GatewayError && err.code === 'NOT_FOUND') throw validationError([{ path: '/organizationId', message: 'no such organization' }]);
      throw err;
    });
    const id = `dept_${orderedUuid()}`;
    const row = await this.db.transaction(async (tx) => {
      const [inserted] = await tx.query<UnitRow>(
        'INSERT INTO departments (id, tenant_id, organization_id, name) VALUES ($1, $2, $3, $4) RETURNING *',
        [id, organization.tenantId, organization.id, fields.name]);
      await recordAdminWrite(tx, { actor: scope.actor, action: 'create', targetType: 'department', targetId: id, details: { name: fields.name, organizationId: organization.id } });
      return inserted!;
    });
    return toDepartment(row);
  }

  getOrganization(id: string, scope: AdminScope): Promise<Organization> {
    return this.getUnit('organizations', id, scope, toOrganization);
  }

  getDepartment(id: string, scope: AdminScope): Promise<Department> {
    return this.getUnit('departments', id, scope, toDepartment);
  }

  listOrganizations(page: PageRequest, scope: AdminScope, filter: { tenantId?: string }): Promise<Page<Organization>> {
    const tenantId = scope.tenantId ?? filter.tenantId;
    if (scope.tenantId && filter.tenantId && filter.tenantId !== scope.tenantId) throw outOfScope(filter.tenantId);
    return listPage(this.db, {
      table: 'organizations', where: tenantId ? ['tenant_id = $1'] : [], params: tenantId ? [tenantId] : [], page, toItem: toOrganization,
    });
  }

  async listDepartments(page: PageRequest, scope: AdminScope, filter: { organizationId?: string }): Promise<Page<Department>> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.organizationId) {
      await this.getOrganization(filter.organizationId, scope);
      params.push(filter.organizationId);
      where.push(`organization_id = $${params.length}`);
    }
    if (scope.tenantId) {
      params.push(scope.tenantId);
      where.push(`tenant_id = $${params.length}`);
    }
    return listPage(this.db, { table: 'departments', where, params, page, toItem: toDepartment });
  }

  /** Replaces the policy of an organization or a department. */
  async setPolicy(kind: 'organization' | 'department', id: string, input: unknown, scope: AdminScope): Promise<Organization | Department> {
    const policy = validatePolicy(input);
    const table = kind === 'organization' ? 'organizations' : 'departments';
    const row = await this.db.transaction(async (tx) => {
      const [current] = await tx.query<UnitRow>(`SELECT * FROM ${table} WHERE id = $1 FOR UPDATE`, [id]);
      if (!current || !visible(scope, current.tenant_id)) throw unitNotFound(kind, id);
      const [updated] = await tx.query<UnitRow>(
        `UPDATE ${table} SET policy = $2, updated_at = now() WHERE id = $1 RETURNING *`, [id, JSON.stringify(policy)]);
      await recordAdminWrite(tx, { actor: scope.actor, action: 'set_policy', targetType: kind, targetId: id, details: { policy } });
      return updated!;
    });
    await this.cache.invalidate(unitKey(kind === 'organization' ? 'org' : 'dept', id), `The policy of ${kind} ${id}`);
    return kind === 'organization' ? toOrganization(row) : toDepartment(row);
  }

  async tenantExists(id: string): Promise<boolean> {
    const cached = await this.cache.get(tenantKey(id));
    if (typeof cached === 'string') return cached === '1';
    const [row] = await this.db.query('SELECT id FROM tenants WHERE id = $1', [id]);
    await this.cache.set(tenantKey(id), row ? '1' : '0', this.cacheTtlMs);
    return Boolean(row);
  }

  /**
   * The policy for a caller in this organization and department, checked against the caller's tenant: null
   * when either unit does not exist there (a credential naming it is not valid).
   */
  async policyFor(member: Member): Promise<EffectivePolicy | null> {
    if (!member.organizationId) return member.departmentId ? null : effectivePolicy([]);
    const org = await this.unit('org', member.organizationId);
    if (!org || org.tenantId !== member.tenantId) return null;
    return this.policyOf(member, org, member.departmentId ? await this.unit('dept', member.departmentId) : null);
  }

  /**
   * policyFor answered within the call when the units are in the in-process KV; undefined when one is not (absent,
   * or a KV that answers with a promise): policyFor then reads it, or the database.
   */
  policyForNow(member: Member): EffectivePolicy | null | undefined {
    if (!member.organizationId) return member.departmentId ? null : effectivePolicy([]);
    const org = this.unitNow('org', member.organizationId);
    if (org === undefined) return undefined;
    if (!org || org.tenantId !== member.tenantId) return null;
    if (!member.departmentId) return this.policyOf(member, org, null);
    const dept = this.unitNow('dept', member.departmentId);
    return dept === undefined ? undefined : this.policyOf(member, org, dept);
  }

  /** The member's policy from its organization (in its tenant) and department, made once per pair of units. */
  private policyOf(member: Member, org: CachedUnit, dept: CachedUnit | null): EffectivePolicy | null {
    let known = this.policies.get(org);
    if (!known) this.policies.set(org, (known = { withDepartment: new WeakMap() }));
    if (!member.departmentId) return (known.alone ??= effectivePolicy([org.policy]));
    if (!dept || dept.organizationId !== member.organizationId) return null;
    let policy = known.withDepartment.get(dept);
    if (!policy) known.withDepartment.set(dept, (policy = effectivePolicy([org.policy, dept.policy])));
    return policy;
  }

  private unitNow(kind: 'org' | 'dept', id: string): CachedUnit | null | undefined {
    const key = unitKey(kind, id);
    const cached = this.cache.getNow(key);
    return typeof cached === 'string' ? this.units.get(key, cached) : undefined;
  }

  /** A unit from the cache (shared and frozen when parsed from it), else from the database. */
  private async unit(kind: 'org' | 'dept', id: string): Promise<CachedUnit | null> {
    const key = unitKey(kind, id);
    const cached = await this.cache.get(key);
    if (typeof cached === 'string') return this.units.get(key, cached);
    const [row] = await this.db.query<UnitRow>(`SELECT * FROM ${kind === 'org' ? 'organizations' : 'departments'} WHERE id = $1`, [id]);
    const unit: CachedUnit | null = row ? { tenantId: row.tenant_id, organizationId: row.organization_id ?? null, policy: row.policy } : null;
    await this.cache.set(unitKey(kind, id), JSON.stringify(unit), this.cacheTtlMs);
    return unit;
  }

  private async getUnit<T>(table: 'organizations' | 'departments', id: string, scope: AdminScope, to: (row: UnitRow) => T): Promise<T> {
    const [row] = await this.db.query<UnitRow>(`SELECT * FROM ${table} WHERE id = $1`, [id]);
    if (!row || !visible(scope, row.tenant_id)) throw unitNotFound(table === 'organizations' ? 'organization' : 'department', id);
    return to(row);
  }
}

const unitNotFound = (kind: string, id: string) => new GatewayError('NOT_FOUND', `No ${kind} ${id}`, { id });
