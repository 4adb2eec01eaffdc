/**
 * Every KV call of the plugin goes through here: bounded by storeTimeoutMs, counted when it fails, logged at
 * most once per LOG_INTERVAL_MS (with the running count), and logged once more when the KV answers again.
 * Nothing is cached about a failure: the next request tries the KV again, so recovery needs no action.
 */
import type { Logger } from '../../core/logger.ts';

const LOG_INTERVAL_MS = 10_000;

export class StoreGuard {
  /** Store errors since the plugin entry was set up (also in every warn line as storeErrors). */
  errors = 0;
  private failing = false;
  private lastLogAt = -Infinity;
  private unlogged = 0;

  constructor(
    private readonly timeoutMs: number,
    private readonly mode: 'open' | 'closed',
    private readonly logger: Logger,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Runs `op` within the timeout; on success clears the failing state, on failure records it and rethrows. */
  async run<T>(what: string, op: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = await Promise.race([
        op(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the KV did not answer within ${this.timeoutMs} ms`)), this.timeoutMs);
        }),
      ]);
      if (this.failing) {
        this.failing = false;
        this.logger.info({ plugin: 'ratelimit', storeErrors: this.errors }, 'ratelimit: the KV answers again');
      }
      return result;
    } catch (err) {
      this.record(what, err);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** For calls whose failure changes nothing for the caller (giving back, settling): recorded, never thrown. */
  async quiet(what: string, op: () => Promise<unknown>): Promise<void> {
    await this.run(what, op).catch(() => {});
  }

  private record(what: string, err: unknown): void {
    this.errors++;
    this.failing = true;
    const at = this.now();
    if (at - this.lastLogAt < LOG_INTERVAL_MS) {
      this.unlogged++;
      return;
    }
    this.logger.warn(
      { plugin: 'ratelimit', op: what, onStoreError: this.mode, storeErrors: this.errors, sinceLastLog: this.unlogged + 1, err: (err as Error)?.message ?? String(err) },
      `ratelimit: the KV failed; requests are ${this.mode === 'open' ? 'let through unlimited' : 'refused with 503'} until it answers`,
    );
    this.lastLogAt = at;
    this.unlogged = 0;
  }
}
