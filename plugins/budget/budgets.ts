/**
 * Budgets: the admin side (create, list, fetch with spend, change the limit, delete; every write audited in its
 * transaction) and the request side (the budgets that apply to a caller, read through the KV so that an admin
 * write holds at once on every instance sharing it: each write deletes the cached list of its scope). Which
 * budgets apply never depends on the KV alone: when it fails the database answers, so that a caller without any
 * budget is served through a KV outage whatever the budget plugin's onStoreError.
 */
import { orderedUuid } from '../../core/store/ids.ts';
import { listPage, type Page, type PageRequest } from '../../core/store/pagination.ts';
import { GatewayError, validationError } from '../../core/errors.ts';
import { recordAdminWrite, type AdminScope } from '../../core/identity/admin-audit.ts';
import { IdentityCache } from '../../core/identity/cache.ts';
import { requireMembership, tenantInScope, visible } from '../../core/identity/directory.ts';
import type { Caller } from '../../core/pipeline/context.ts';
import type { PluginDatabase, PluginKv, PluginLogger, PluginQueryable } from '../../core/pipeline/services.ts';
import { compileRequestSchema } from '../../core/validation.ts';
import { BudgetLedger, type ApplicableBudget } from './ledger.ts';
import { BUDGET_PERIODS, BUDGET_SCOPES, periodEnd, periodStart, usd, type BudgetPeriod, type BudgetScope } from './periods.ts';
import { createBudgetSchema, updateBudgetSchema } from './schemas.ts';
import { ParsedTexts } from '../../core/store/parsed-texts.ts';

export interface BudgetRecord {
  id: string; object: 'budget'; tenantId: string; scope: BudgetScope; scopeId: string | null; period: BudgetPeriod;
  limitUsd: number; createdAt: string; updatedAt: string;
}

export interface BudgetStatus extends BudgetRecord {
  spentUsd: number; remainingUsd: number; periodStart: string | null; resetsAt: string | null;
}

interface BudgetRow {
  id: string; tenant_id: string; scope: BudgetScope; scope_id: string | null; period: BudgetPeriod;
  limit_usd: string | number; created_at: Date | string; updated_at: Date | string;
}

type CallerScope = Pick<Caller, 'kind' | 'id' | 'tenantId' | 'organizationId' | 'departmentId'>;

interface CallerScopes extends Omit<CallerScope, 'id'> {
  scopes: Array<[BudgetScope, string | null]>;
  keys: string[];
  /** The lists last read for this caller and what they made. */
  last?: { lists: ApplicableBudget[][]; joined: readonly ApplicableBudget[] };
}

/** Callers whose scopes are kept; past it the map starts again (busy callers come back at once). */
const CALLERS_KEPT = 10_000;

const iso = (value: Date | string) => (value instanceof Date ? value : new Date(value)).toISOString();

/** numeric(18, 6) as Postgres writes it -> integer micro-dollars, exactly. */
export function microsOf(value: string | number): number {
  const [whole = '0', fraction = ''] = String(value).split('.');
  return Number(whole) * 1e6 + Number(fraction.padEnd(6, '0').slice(0, 6));
}

const toApplicable = (row: BudgetRow): ApplicableBudget => ({
  id: row.id, tenantId: row.tenant_id, scope: row.scope, scopeId: row.scope_id, period: row.period, limitMicros: microsOf(row.limit_usd),
});

const toRecord = (row: BudgetRow): BudgetRecord => ({
  id: row.id, object: 'budget', tenantId: row.tenant_id, scope: row.scope, scopeId: row.scope_id, period: row.period,
  limitUsd: usd(microsOf(row.limit_usd)), createdAt: iso(row.created_at), updatedAt: iso(row.updated_at),
});

interface CreateInput { tenantId?: string; scope: BudgetScope; scopeId?: string; period: BudgetPeriod; limitUsd: number }

const validateCreate = compileRequestSchema<CreateInput>(createBudgetSchema);
const validateUpdate = compileRequestSchema<{ limitUsd: number }>(updateBudgetSchema);

/** USD -> micro-dollars, refusing amounts finer than a micro-dollar. */
function limitMicros(limit: number): number {
  const micros = Math.round(limit * 1e6);
  if (Math.abs(micros / 1e6 - limit) > Math.max(1, limit) * 1e-12) {
    throw validationError([{ path: '/limitUsd', message: 'must have at most 6 decimal places (whole micro-dollars)' }]);
  }
  return micros;
}

/** Where each scope's ids live, and the name to report. */
const SCOPE_TABLE: Record<Exclude<BudgetScope, 'deployment'>, { table: string; what: string }> = {
  organization: { table: 'organizations', what: 'organization' },
  department: { table: 'departments', what: 'department' },
  key: { table: 'api_keys', what: 'API key' },
};

const listKey = (tenantId: string, scope: BudgetScope, scopeId: string | null) => `budget:list:${tenantId}:${scope}:${scopeId ?? ''}`;

const notFound = (id: string) => new GatewayError('NOT_FOUND', `No budget ${id}`, { id });

const single = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

export class BudgetService {
  readonly ledger: BudgetLedger;
  private readonly cache: IdentityCache;
  /** The cached lists, parsed once per text: every request reads its caller's. */
  private readonly lists = new ParsedTexts<ApplicableBudget[]>();
  private readonly callerScopes = new Map<string, CallerScopes>();

  constructor(
    private readonly db: PluginDatabase,
    kv: PluginKv,
    private readonly now: () => number,
    private readonly cacheTtlMs: number,
    logger?: PluginLogger,
  ) {
    this.ledger = new BudgetLedger(db, kv);
    this.cache = new IdentityCache(kv, logger, Date.now, 'the KV is unreachable: which budgets apply is read from the database until it answers');
  }

  /**
   * Every budget that applies to a caller: its tenant's, its organization's, its department's, its key's. The
   * cached lists are read in one KV call; a scope missing from the cache is read from the database, and so is
   * every scope when the KV fails.
   */
  applicable(caller: CallerScope): readonly ApplicableBudget[] | Promise<readonly ApplicableBudget[]> {
    const scopes = this.scopesOf(caller);
    // The in-process KV answers within the call: with every list cached, the common case, no promise at all.
    const now = this.cache.mgetNow(scopes.keys);
    if (now && !now.includes(null)) return this.joined(scopes, now);
    return this.applicableRead(caller, scopes, now);
  }

  /** `read`: the cached lists when the in-process KV gave them already (some missing); read here otherwise. */
  private async applicableRead(caller: CallerScope, { scopes, keys }: CallerScopes, read: Array<string | null> | undefined): Promise<readonly ApplicableBudget[]> {
    const cached = read ?? await this.cache.mget(keys);
    const lists = scopes.map(([scope, id], i) => {
      const hit = cached?.[i];
      // Not cached: read and cache it. The KV failed: read it, and leave the KV alone until it answers.
      if (hit == null) return this.load(caller.tenantId, scope, id, cached ? keys[i] : undefined);
      return this.lists.get(keys[i]!, hit);
    });
    return (await Promise.all(lists)).flat();
  }

  /** The scopes whose budgets apply to a caller, and their list keys: made once per caller (the keys hashed once). */
  private scopesOf(caller: CallerScope): CallerScopes {
    const known = this.callerScopes.get(caller.id);
    if (known && known.tenantId === caller.tenantId && known.organizationId === caller.organizationId
      && known.departmentId === caller.departmentId && known.kind === caller.kind) return known;
    const scopes: Array<[BudgetScope, string | null]> = [['deployment', null]];
    if (caller.organizationId) scopes.push(['organization', caller.organizationId]);
    if (caller.departmentId) scopes.push(['department', caller.departmentId]);
    if (caller.kind === 'api_key') scopes.push(['key', caller.id]);
    const made: CallerScopes = {
      tenantId: caller.tenantId, organizationId: caller.organizationId, departmentId: caller.departmentId, kind: caller.kind,
      scopes, keys: scopes.map(([scope, id]) => listKey(caller.tenantId, scope, id)),
    };
    if (!known && this.callerScopes.size >= CALLERS_KEPT) this.callerScopes.clear();
    this.callerScopes.set(caller.id, made);
    return made;
  }

  /**
   * The cached lists as one: the same array while the cached texts stay the same (the ledger keeps each array's
   * reservation order), frozen since requests share it.
   */
  private joined(entry: CallerScopes, texts: ReadonlyArray<string | null>): readonly ApplicableBudget[] {
    const lists = entry.keys.map((key, i) => this.lists.get(key, texts[i]!));
    const last = entry.last;
    if (last && last.lists.length === lists.length && last.lists.every((list, i) => list === lists[i])) return last.joined;
    const joined = Object.freeze(lists.flat());
    entry.last = { lists, joined };
    return joined;
  }

  private async load(tenantId: string, scope: BudgetScope, scopeId: string | null, cacheKey: string | undefined): Promise<ApplicableBudget[]> {
    const rows = await this.db.query<BudgetRow>(
      "SELECT * FROM budgets WHERE tenant_id = $1 AND scope = $2 AND COALESCE(scope_id, '') = $3", [tenantId, scope, scopeId ?? '']);
    const budgets = rows.map(toApplicable).sort((a, b) => BUDGET_PERIODS.indexOf(a.period) - BUDGET_PERIODS.indexOf(b.period));
    if (cacheKey) await this.cache.set(cacheKey, JSON.stringify(budgets), this.cacheTtlMs);
    return budgets;
  }

  /** A budget with what it has spent in the current period (by the gateway's clock). */
  async status(budget: BudgetRecord): Promise<BudgetStatus> {
    const now = this.now();
    const applicable: ApplicableBudget = { ...budget, limitMicros: Math.round(budget.limitUsd * 1e6) };
    const spent = await this.ledger.spentMicros(applicable, now);
    const start = periodStart(budget.period, now);
    const end = periodEnd(budget.period, start);
    return {
      ...budget,
      spentUsd: usd(Math.max(spent, 0)),
      remainingUsd: usd(Math.max(applicable.limitMicros - spent, 0)),
      periodStart: budget.period === 'total' ? null : new Date(start).toISOString(),
      resetsAt: end === null ? null : new Date(end).toISOString(),
    };
  }

  async create(input: unknown, scope: AdminScope): Promise<BudgetRecord> {
    const fields = validateCreate(input);
    const micros = limitMicros(fields.limitUsd);
    const id = `budget_${orderedUuid()}`;
    const row = await this.db.transaction(async (tx) => {
      const { tenantId, scopeId } = await this.owner(tx, fields, scope);
      const [inserted] = await tx.query<BudgetRow>(
        `INSERT INTO budgets (id, tenant_id, scope, scope_id, period, limit_usd) VALUES ($1, $2, $3, $4, $5, $6::numeric / 1000000)
         ON CONFLICT DO NOTHING RETURNING *`,
        [id, tenantId, fields.scope, scopeId, fields.period, micros]);
      if (!inserted) {
        const [existing] = await tx.query<{ id: string }>(
          "SELECT id FROM budgets WHERE tenant_id = $1 AND scope = $2 AND COALESCE(scope_id, '') = $3 AND period = $4",
          [tenantId, fields.scope, scopeId ?? '', fields.period]);
        throw validationError([{ path: '/period', message: `this scope already has a ${fields.period} budget (${existing?.id ?? 'unknown'}): change its limit instead` }]);
      }
      await recordAdminWrite(tx, {
        actor: scope.actor, action: 'create', targetType: 'budget', targetId: id,
        details: { tenantId, scope: fields.scope, scopeId, period: fields.period, limitUsd: usd(micros) },
      });
      return inserted;
    });
    await this.cache.invalidate(listKey(row.tenant_id, row.scope, row.scope_id), `Budget ${id}`);
    return toRecord(row);
  }

  /** The tenant a new budget belongs to, checked against the admin's scope, and its scope id. */
  private async owner(tx: PluginQueryable, fields: CreateInput, scope: AdminScope): Promise<{ tenantId: string; scopeId: string | null }> {
    if (fields.scope === 'deployment') {
      if (fields.scopeId !== undefined) throw validationError([{ path: '/scopeId', message: 'must be absent for scope deployment (the tenant is tenantId)' }]);
      const tenantId = tenantInScope(scope, fields.tenantId);
      await requireMembership(tx, { tenantId });
      return { tenantId, scopeId: null };
    }
    const { table, what } = SCOPE_TABLE[fields.scope];
    if (fields.scopeId === undefined) throw validationError([{ path: '/scopeId', message: `is required for scope ${fields.scope}` }]);
    if (fields.tenantId !== undefined) tenantInScope(scope, fields.tenantId);
    const [owner] = await tx.query<{ tenant_id: string }>(`SELECT tenant_id FROM ${table} WHERE id = $1`, [fields.scopeId]);
    // A record of a tenant the admin may not see is reported like one that does not exist.
    if (!owner || !visible(scope, owner.tenant_id) || (fields.tenantId !== undefined && fields.tenantId !== owner.tenant_id)) {
      const where = fields.tenantId !== undefined ? ` in tenant "${fields.tenantId}"` : '';
      throw validationError([{ path: '/scopeId', message: `no such ${what}${where}` }]);
    }
    return { tenantId: owner.tenant_id, scopeId: fields.scopeId };
  }

  async list(page: PageRequest, scope: AdminScope, query: Record<string, string | string[] | undefined>): Promise<Page<BudgetRecord>> {
    const filter = { tenantId: single(query.tenantId), scope: single(query.scope), scopeId: single(query.scopeId) };
    if (filter.scope !== undefined && !(BUDGET_SCOPES as readonly string[]).includes(filter.scope)) {
      throw validationError([{ path: '/scope', message: `must be one of ${BUDGET_SCOPES.join(', ')}` }]);
    }
    if (scope.tenantId && filter.tenantId && filter.tenantId !== scope.tenantId) {
      throw new GatewayError('AUTH_FORBIDDEN', `This admin credential may not act on tenant "${filter.tenantId}"`, { tenantId: filter.tenantId });
    }
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (clause: string, value: unknown) => {
      params.push(value);
      where.push(clause.replace('?', `$${params.length}`));
    };
    const tenantId = scope.tenantId ?? filter.tenantId;
    if (tenantId) add('tenant_id = ?', tenantId);
    if (filter.scope) add('scope = ?', filter.scope);
    if (filter.scopeId) add('scope_id = ?', filter.scopeId);
    return listPage(this.db, { table: 'budgets', where, params, page, toItem: toRecord });
  }

  async get(id: string, scope: AdminScope): Promise<BudgetStatus> {
    const [row] = await this.db.query<BudgetRow>('SELECT * FROM budgets WHERE id = $1', [id]);
    if (!row || !visible(scope, row.tenant_id)) throw notFound(id);
    return this.status(toRecord(row));
  }

  async setLimit(id: string, input: unknown, scope: AdminScope): Promise<BudgetStatus> {
    const micros = limitMicros(validateUpdate(input).limitUsd);
    const row = await this.db.transaction(async (tx) => {
      const [current] = await tx.query<BudgetRow>('SELECT * FROM budgets WHERE id = $1 FOR UPDATE', [id]);
      if (!current || !visible(scope, current.tenant_id)) throw notFound(id);
      const [updated] = await tx.query<BudgetRow>(
        'UPDATE budgets SET limit_usd = $2::numeric / 1000000, updated_at = now() WHERE id = $1 RETURNING *', [id, micros]);
      await recordAdminWrite(tx, {
        actor: scope.actor, action: 'set_limit', targetType: 'budget', targetId: id,
        details: { limitUsd: usd(micros), previousLimitUsd: usd(microsOf(current.limit_usd)) },
      });
      return updated!;
    });
    await this.cache.invalidate(listKey(row.tenant_id, row.scope, row.scope_id), `The new limit of ${id}`);
    return this.status(toRecord(row));
  }

  async delete(id: string, scope: AdminScope): Promise<{ id: string; object: 'budget'; deleted: true }> {
    const row = await this.db.transaction(async (tx) => {
      const [current] = await tx.query<BudgetRow>('SELECT * FROM budgets WHERE id = $1 FOR UPDATE', [id]);
      if (!current || !visible(scope, current.tenant_id)) throw notFound(id);
      await tx.query('DELETE FROM budgets WHERE id = $1', [id]);
      await recordAdminWrite(tx, {
        actor: scope.actor, action: 'delete', targetType: 'budget', targetId: id,
        details: { tenantId: current.tenant_id, scope: current.scope, scopeId: current.scope_id, period: current.period, limitUsd: usd(microsOf(current.limit_usd)) },
      });
      return current;
    });
    await this.cache.invalidate(listKey(row.tenant_id, row.scope, row.scope_id), `The deletion of ${id}`);
    await this.ledger.forget(toApplicable(row), this.now());
    return { id, object: 'budget', deleted: true };
  }
}
