/**
 * What budgets have spent: one KV counter per budget and period start, in integer micro-dollars, so that every
 * instance sharing the KV adds to the same exact number. A request reserves its estimated cost on every budget
 * that applies (counterAdd with the limit as ceiling: atomic, so concurrent requests never reserve past it) and
 * settles to its real cost afterwards (the difference, which may be negative, is added without a ceiling).
 *
 * A counter that is missing (a restarted in-memory KV, a flushed Redis, a new period) is rebuilt before use from
 * usage_records: what the usage plugin recorded for that scope since the period began. setIfAbsent makes
 * concurrent rebuilds agree: the first one stands. Without the usage plugin the table is empty and counters
 * start from zero.
 */
import type { Queryable } from '../store/database.ts';
import type { KV } from '../store/kv.ts';
import { counterTtlMs, periodStart, type BudgetPeriod, type BudgetScope } from './periods.ts';

/** A budget as requests see it. */
export interface ApplicableBudget {
  id: string;
  tenantId: string;
  scope: BudgetScope;
  /** Null for the deployment (the tenant itself). */
  scopeId: string | null;
  period: BudgetPeriod;
  limitMicros: number;
}

interface Counter {
  key: string;
  start: number;
  ttlMs: number;
}

export interface Reservation {
  micros: number;
  counters: Array<{ budget: ApplicableBudget; key: string; ttlMs: number }>;
}

export type ReserveOutcome =
  | { ok: true; reservation: Reservation }
  /** The first budget (in reservation order) the request did not fit in, and what it had spent or reserved. */
  | { ok: false; budget: ApplicableBudget; spentMicros: number };

/** The usage_records column that names each scope; the deployment is the tenant itself. */
const SCOPE_COLUMN: Record<BudgetScope, string | null> = {
  deployment: null,
  organization: 'organization_id',
  department: 'department_id',
  key: 'api_key_id',
};

/** Reservations go in this order, so that two requests never hold parts of each other's budgets crosswise. */
const SCOPE_ORDER: Record<BudgetScope, number> = { deployment: 0, organization: 1, department: 2, key: 3 };
const PERIOD_ORDER: Record<BudgetPeriod, number> = { daily: 0, monthly: 1, total: 2 };

export function reservationOrder(a: ApplicableBudget, b: ApplicableBudget): number {
  return SCOPE_ORDER[a.scope] - SCOPE_ORDER[b.scope] || PERIOD_ORDER[a.period] - PERIOD_ORDER[b.period] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

export class BudgetLedger {
  constructor(private readonly db: Queryable, private readonly kv: KV) {}

  counter(budget: ApplicableBudget, now: number): Counter {
    const start = periodStart(budget.period, now);
    return { key: `budget:spend:${budget.id}:${start}`, start, ttlMs: counterTtlMs(budget.period, start, now) };
  }

  /** Creates a missing counter from the usage records of its period. */
  private async ensure(budget: ApplicableBudget, counter: Counter): Promise<void> {
    if ((await this.kv.get(counter.key)) !== null) return;
    const micros = await this.recordedMicros(budget, counter.start);
    await this.kv.setIfAbsent(counter.key, String(micros), counter.ttlMs);
  }

  /** The cost the usage plugin recorded for the budget's scope since `start`, rounded per record as counters are. */
  async recordedMicros(budget: Pick<ApplicableBudget, 'tenantId' | 'scope' | 'scopeId'>, start: number): Promise<number> {
    const column = SCOPE_COLUMN[budget.scope];
    const params: unknown[] = [budget.tenantId, new Date(start).toISOString()];
    let where = 'tenant_id = $1 AND created_at >= $2 AND cost_usd IS NOT NULL';
    if (column) {
      params.push(budget.scopeId);
      where += ` AND ${column} = $3`;
    }
    const [row] = await this.db.query<{ micros: string }>(
      `SELECT COALESCE(sum(round(cost_usd * 1000000)), 0)::bigint::text AS micros FROM usage_records WHERE ${where}`, params);
    return Number(row?.micros ?? 0);
  }

  /** What the budget has spent (settled) or reserved (in flight) in the period holding `now`, in micro-dollars. */
  async spentMicros(budget: ApplicableBudget, now: number): Promise<number> {
    const counter = this.counter(budget, now);
    await this.ensure(budget, counter);
    return Number((await this.kv.get(counter.key)) ?? 0);
  }

  /**
   * Reserves `micros` on every budget, in reservation order. When one refuses, what the earlier ones reserved is
   * given back and the refusing budget is reported. A request fits when spent + micros <= limit; a request of
   * cost 0 fits unless the budget is already over its limit.
   */
  async reserve(budgets: readonly ApplicableBudget[], micros: number, now: number): Promise<ReserveOutcome> {
    const reservation: Reservation = { micros, counters: [] };
    try {
      for (const budget of [...budgets].sort(reservationOrder)) {
        const counter = this.counter(budget, now);
        await this.ensure(budget, counter);
        const added = await this.kv.counterAdd(counter.key, micros, budget.limitMicros, counter.ttlMs);
        if (added.applied) reservation.counters.push({ budget, key: counter.key, ttlMs: counter.ttlMs });
        if (!added.applied || (micros === 0 && added.value > budget.limitMicros)) {
          await this.settle(reservation, 0);
          return { ok: false, budget, spentMicros: added.applied ? added.value - micros : added.value };
        }
      }
    } catch (err) {
      // Give back what was reserved before the store failed; if that fails too, the counters keep it (refusing
      // more, never overspending) until their period ends.
      await this.settle(reservation, 0).catch(() => {});
      throw err;
    }
    return { ok: true, reservation };
  }

  /** Settles a reservation to what the request really cost (0 gives it all back). Never refused. */
  async settle(reservation: Reservation, actualMicros: number): Promise<void> {
    const delta = actualMicros - reservation.micros;
    if (delta === 0) return;
    await Promise.all(reservation.counters.map((c) => this.kv.counterAdd(c.key, delta, null, c.ttlMs)));
  }

  /** Drops the counter of the current period (a deleted budget). */
  async forget(budget: ApplicableBudget, now: number): Promise<void> {
    await this.kv.del(this.counter(budget, now).key);
  }
}
