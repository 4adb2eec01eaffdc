/**
 * Every store call of the budget plugin (KV counters and caches, and the database when a counter is rebuilt)
 * goes through here: bounded by storeTimeoutMs, counted when it fails, logged at most once per LOG_INTERVAL_MS
 * with the running count, and logged once more when the stores answer again. Nothing about a failure is kept:
 * the next request tries again, so recovery needs no action.
 */
import type { Logger } from '../../core/logger.ts';

const LOG_INTERVAL_MS = 10_000;

export class BudgetStoreGuard {
  /** Store errors since the plugin entry was set up (also in every warn line as storeErrors). */
  errors = 0;
  private failing = false;
  private lastLogAt = -Infinity;
  private unlogged = 0;

  constructor(private readonly timeoutMs: number, private readonly mode: 'open' | 'closed', private readonly logger: Logger) {}

  async run<T>(what: string, op: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = await Promise.race([
        op(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the store did not answer within ${this.timeoutMs} ms`)), this.timeoutMs);
        }),
      ]);
      if (this.failing) {
        this.failing = false;
        this.logger.info({ plugin: 'budget', storeErrors: this.errors }, 'budget: the stores answer again');
      }
      return result;
    } catch (err) {
      this.record(what, err);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** For calls whose failure changes nothing for the caller (settling): recorded, never thrown. */
  async quiet(what: string, op: () => Promise<unknown>): Promise<void> {
    await this.run(what, op).catch(() => {});
  }

  private record(what: string, err: unknown): void {
    this.errors++;
    this.failing = true;
    const at = performance.now();
    if (at - this.lastLogAt < LOG_INTERVAL_MS) {
      this.unlogged++;
      return;
    }
    this.logger.warn(
      { plugin: 'budget', op: what, onStoreError: this.mode, storeErrors: this.errors, sinceLastLog: this.unlogged + 1, err: (err as Error)?.message ?? String(err) },
      `budget: a store failed; budgeted requests are ${this.mode === 'open' ? 'let through unchecked' : 'refused with 503'} until it answers`,
    );
    this.lastLogAt = at;
    this.unlogged = 0;
  }
}
