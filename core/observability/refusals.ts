/**
 * Limit refusals (429 from ratelimit, 402 from budget) as log lines: at most one per interval for each (level,
 * tenant), saying how many refusals it stands for. A caller hammering past its limit makes one line a minute,
 * not one per request. Pairs are remembered up to a bound; past it the oldest is forgotten (and may log again
 * sooner).
 */
import { LogThrottle } from '../log-throttle.ts';
import type { Log } from '../log.ts';
import type { RequestOutcome } from './outcome.ts';

export const REFUSAL_LOG_INTERVAL_MS = 60_000;
const MAX_PAIRS = 10_000;

export class RefusalLog {
  private readonly throttles = new Map<string, LogThrottle>();

  constructor(private readonly logger: Log, private readonly now: () => number, private readonly intervalMs = REFUSAL_LOG_INTERVAL_MS) {}

  note(outcome: RequestOutcome): void {
    const refusal = outcome.refusal;
    if (!refusal) return;
    const tenant = outcome.tenant ?? null;
    const key = `${refusal.code} ${refusal.level} ${tenant ?? ''}`;
    let throttle = this.throttles.get(key);
    if (!throttle) {
      if (this.throttles.size >= MAX_PAIRS) this.throttles.delete(this.throttles.keys().next().value!);
      throttle = new LogThrottle(this.intervalMs, this.now);
      this.throttles.set(key, throttle);
    }
    const refusals = throttle.due();
    if (refusals === null) return;
    this.logger.warn(
      { code: refusal.code, level: refusal.level, tenant, refusals, intervalMs: this.intervalMs, route: outcome.route, keyId: outcome.keyId },
      `requests refused by a limit (${refusal.code}) at the ${refusal.level} level`,
    );
  }
}
