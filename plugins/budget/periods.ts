/**
 * Budget periods in UTC: a daily budget starts again at midnight UTC, a monthly one on the first of the month
 * at midnight UTC, a total one never. Times come from the gateway's clock (services.clock), so every instance
 * must keep its clock in time (NTP): around a boundary, an instance whose clock lags still charges the old period
 * for as long as it lags.
 */
export const BUDGET_SCOPES = ['deployment', 'organization', 'department', 'key'] as const;
export const BUDGET_PERIODS = ['daily', 'monthly', 'total'] as const;

export type BudgetScope = (typeof BUDGET_SCOPES)[number];
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

const DAY_MS = 86_400_000;

/** Ms since the epoch when the period holding `now` began; 0 for total. */
export function periodStart(period: BudgetPeriod, now: number): number {
  if (period === 'total') return 0;
  const d = new Date(now);
  return period === 'daily'
    ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
    : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** Ms since the epoch when the period that began at `start` ends (the next one begins); null for total. */
export function periodEnd(period: BudgetPeriod, start: number): number | null {
  if (period === 'total') return null;
  if (period === 'daily') return start + DAY_MS;
  const d = new Date(start);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** Counters outlive their period by a day, so that late settlements land on them; total counters live on. */
const GRACE_MS = DAY_MS;
const TOTAL_TTL_MS = 3650 * DAY_MS;

/** The TTL a counter of this period gets when it is created at `now`. */
export function counterTtlMs(period: BudgetPeriod, start: number, now: number): number {
  const end = periodEnd(period, start);
  return end === null ? TOTAL_TTL_MS : Math.max(end - now, 0) + GRACE_MS;
}

/** Integer micro-dollars -> USD. */
export const usd = (micros: number): number => micros / 1e6;
