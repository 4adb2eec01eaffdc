/**
 * A store that stops answering within its deadline, and answers again: one log line each way (the second says
 * how long it was lost), and the metrics' stall count and gauge once they exist.
 */
import type { Log } from '../log.ts';

export class StoreStallReporter {
  /** Set once the gateway built its metrics (after the stores opened). */
  metrics?: { storeStall(store: string, stalled: boolean): void };
  private readonly since = new Map<string, number>();

  constructor(private readonly logger: Log, private readonly now: () => number) {}

  report(store: string, stalled: boolean, timeoutMs: number): void {
    this.metrics?.storeStall(store, stalled);
    if (stalled) {
      this.since.set(store, this.now());
      this.logger.warn({ store, timeoutMs }, `the ${store} answered nothing for ${timeoutMs} ms: its calls fail at once, one probing it per deadline, until it answers`);
      return;
    }
    const lostAt = this.since.get(store);
    this.since.delete(store);
    this.logger.info({ store, ...(lostAt === undefined ? {} : { lostForMs: this.now() - lostAt }) }, `the ${store} answers again`);
  }
}
