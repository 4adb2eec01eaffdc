/**
 * What budgets have spent: one KV counter per budget and period start, in integer micro-dollars, so that every
 * instance sharing the KV adds to the same exact number. A request reserves its estimated cost on every budget
 * that applies in one atomic, all-or-nothing countersAdd (each counter with its limit as ceiling), so concurrent
 * requests never reserve past a limit, and settles to its real cost afterwards in one more call (the
 * difference, which may be negative, is added without a ceiling).
 *
 * A counter that is missing (a restarted in-memory KV, a flushed Redis, a new period) is rebuilt before use from
 * usage_records: what the usage plugin recorded for that scope since the period began. setIfAbsent makes
 * concurrent rebuilds agree: the first one stands. Without the usage plugin the table is empty and counters
 * start from zero.
 */
import type { PluginKv, PluginQueryable } from '../../core/pipeline/services.ts';
import { StoreUnavailableError } from '../../core/store/deadline.ts';
import { countersAdd, type CounterAdd, type CountersOutcome } from './counters.ts';
import { settleOnce, type SettleOnceOutcome } from './settle-once.ts';
import { counterTtlMs, periodEnd, periodStart, type BudgetPeriod, type BudgetScope } from './periods.ts';

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
  /** When the period ends (the next counter begins); Infinity for total. */
  end: number;
  /** The TTL the counter gets when it is created at `now`. */
  ttlMs(now: number): number;
}

export interface Reservation {
  micros: number;
  /** The counters it was added to. */
  keys: string[];
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

/** The order budgets are reserved and reported in: a refusal names the first that refused; GET /v1/budget lists them so. */
const SCOPE_ORDER: Record<BudgetScope, number> = { deployment: 0, organization: 1, department: 2, key: 3 };
const PERIOD_ORDER: Record<BudgetPeriod, number> = { daily: 0, monthly: 1, total: 2 };

/** Rounds of rebuilding missing counters before a reservation gives up (a store error). */
const MAX_REBUILDS = 3;

export function reservationOrder(a: ApplicableBudget, b: ApplicableBudget): number {
  return SCOPE_ORDER[a.scope] - SCOPE_ORDER[b.scope] || PERIOD_ORDER[a.period] - PERIOD_ORDER[b.period] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** What an applied or refused counters call means for the reservation. */
function reserved(outcome: Exclude<CountersOutcome, { status: 'missing' }>, sorted: readonly ApplicableBudget[], reservation: Reservation): ReserveOutcome {
  return outcome.status === 'applied' ? { ok: true, reservation } : { ok: false, budget: sorted[outcome.index]!, spentMicros: outcome.value };
}

/** After a settlement that found counters missing (and added nothing): the adds of those still there, to apply. */
function stillPresent(adds: readonly CounterAdd[], outcome: CountersOutcome): CounterAdd[] | undefined {
  if (outcome.status !== 'missing') return undefined;
  const present = adds.filter((_, i) => !outcome.missing.includes(i));
  return present.length > 0 ? present : undefined;
}

export class BudgetLedger {
  /**
   * Each budget's counter for its current period. Budgets come from parsed texts every request shares
   * (budgets.ts), so the same objects come back: their key is built and hashed once per period, not per request.
   */
  private readonly counters = new WeakMap<ApplicableBudget, Counter>();
  /** A list of budgets in reservation order, per list: the same cached list comes back with every request. */
  private readonly ordered = new WeakMap<readonly ApplicableBudget[], readonly ApplicableBudget[]>();

  constructor(private readonly db: PluginQueryable, private readonly kv: PluginKv) {}

  counter(budget: ApplicableBudget, now: number): Counter {
    const known = this.counters.get(budget);
    if (known && now >= known.start && now < known.end) return known;
    const { period } = budget;
    const start = periodStart(period, now);
    const counter: Counter = {
      key: `budget:spend:${budget.id}:${start}`, start, end: periodEnd(period, start) ?? Infinity,
      ttlMs: (at) => counterTtlMs(period, start, at),
    };
    this.counters.set(budget, counter);
    return counter;
  }

  private inOrder(budgets: readonly ApplicableBudget[]): readonly ApplicableBudget[] {
    if (budgets.length < 2) return budgets;
    let sorted = this.ordered.get(budgets);
    if (!sorted) this.ordered.set(budgets, (sorted = [...budgets].sort(reservationOrder)));
    return sorted;
  }

  /** Creates a missing counter from the usage records of its period. */
  private async rebuild(budget: ApplicableBudget, counter: Counter, now: number): Promise<void> {
    const micros = await this.recordedMicros(budget, counter.start);
    await this.kv.setIfAbsent(counter.key, String(micros), counter.ttlMs(now));
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
    const value = await this.kv.get(counter.key);
    if (value !== null) return Number(value);
    await this.rebuild(budget, counter, now);
    return Number((await this.kv.get(counter.key)) ?? 0);
  }

  /**
   * Reserves `micros` on every budget, all or nothing, in one KV call; missing counters are rebuilt first (and
   * the call made again). When one refuses, nothing is reserved and the first refusing budget in reservation
   * order is reported. A request fits when spent + micros <= limit; a request of cost 0 fits unless the budget is
   * already over its limit.
   */
  reserve(budgets: readonly ApplicableBudget[], micros: number, now: number): ReserveOutcome | Promise<ReserveOutcome> {
    const sorted = this.inOrder(budgets);
    const counters = sorted.map((budget) => this.counter(budget, now));
    const adds = counters.map((counter, i) => ({ key: counter.key, amount: micros, ceiling: sorted[i]!.limitMicros }));
    const reservation: Reservation = { micros, keys: counters.map((c) => c.key) };
    if (this.kv.runNow) {
      // The in-process KV answers at once; only missing counters (rebuilt from the database) need a promise.
      const outcome = this.kv.runNow(countersAdd, adds);
      if (outcome.status !== 'missing') return reserved(outcome, sorted, reservation);
    }
    return this.reserveRebuilding(sorted, counters, adds, reservation, now);
  }

  private async reserveRebuilding(
    sorted: readonly ApplicableBudget[], counters: readonly Counter[], adds: readonly CounterAdd[], reservation: Reservation, now: number,
  ): Promise<ReserveOutcome> {
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.kv.run(countersAdd, adds).catch((err: unknown) => {
        // Past its deadline the call may still run once the KV wakes: what it reserved then is reported as this
        // reservation's late outcome (lateOutcome), for the caller to give back.
        if (!(err instanceof StoreUnavailableError)) throw err;
        throw err.mapLate((late: CountersOutcome): ReserveOutcome | undefined => (late.status === 'applied' ? { ok: true, reservation } : undefined));
      });
      if (outcome.status !== 'missing') return reserved(outcome, sorted, reservation);
      // A counter that expires between its rebuild and the next call (a period ending) makes another round.
      if (attempt === MAX_REBUILDS) throw new Error(`budget counters keep vanishing: ${outcome.missing.map((i) => counters[i]!.key).join(', ')}`);
      await Promise.all(outcome.missing.map((i) => this.rebuild(sorted[i]!, counters[i]!, now)));
    }
  }

  /**
   * Settles a reservation to what the request really cost (0 gives it all back): one call, never refused. A
   * counter gone meanwhile is not recreated at the difference: it is rebuilt from the usage records when next
   * needed, and they hold this request once the usage plugin has written it. Done when it returns on the
   * in-process KV.
   */
  settle(reservation: Reservation, actualMicros: number): void | Promise<void> {
    const delta = actualMicros - reservation.micros;
    if (delta === 0 || reservation.keys.length === 0) return;
    const adds = reservation.keys.map((key) => ({ key, amount: delta, ceiling: null }));
    if (!this.kv.runNow) return this.settleRemote(adds);
    const present = stillPresent(adds, this.kv.runNow(countersAdd, adds));
    if (present) this.kv.runNow(countersAdd, present);
  }

  private async settleRemote(adds: readonly CounterAdd[]): Promise<void> {
    const present = stillPresent(adds, await this.kv.run(countersAdd, adds));
    if (present) await this.kv.run(countersAdd, present);
  }

  /**
   * Charges money already spent (a batch) to the budgets' counters of the periods holding `at`, once per
   * `marker` however often it is called: settle-once.ts. Missing counters are not created (settle.ts says why).
   */
  async chargeOnce(budgets: readonly ApplicableBudget[], micros: number, at: number, marker: string, markerTtlMs: number): Promise<SettleOnceOutcome> {
    const adds = budgets.map((budget) => ({ key: this.counter(budget, at).key, amount: micros }));
    return this.kv.run(settleOnce, { marker, markerTtlMs, adds });
  }

  /** Drops the counter of the current period (a deleted budget). */
  async forget(budget: ApplicableBudget, now: number): Promise<void> {
    await this.kv.del(this.counter(budget, now).key);
  }
}
