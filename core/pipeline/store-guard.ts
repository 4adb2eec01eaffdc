/**
 * For plugins whose every call to a shared store (KV, database) must be bounded: each call gets storeTimeoutMs,
 * a failure is counted and logged at most once per LOG_INTERVAL_MS (with the running count), and once more when
 * the store answers again. Nothing about a failure is kept: the next request tries again, so recovery needs no
 * action.
 */
import { LogThrottle } from '../log-throttle.ts';
import type { PluginLogger } from './services.ts';
import { withTimeout } from '../timeout.ts';

const LOG_INTERVAL_MS = 10_000;

export interface StoreGuardOptions {
  /** The plugin's name, in every log line. */
  plugin: string;
  timeoutMs: number;
  mode: 'open' | 'closed';
  logger: PluginLogger;
  messages: {
    /** The error of a call that timed out, before " within N ms". */
    timeout: string;
    /** Logged (warn) when a call fails, at most once per interval. */
    failed: string;
    /** Logged (info) on the first success after failures. */
    recovered: string;
  };
  now?: () => number;
}

export class StoreGuard {
  /** Store errors since the plugin entry was set up (also in every warn line as storeErrors). */
  errors = 0;
  private failing = false;
  private readonly throttle: LogThrottle;

  constructor(private readonly options: StoreGuardOptions) {
    this.throttle = new LogThrottle(LOG_INTERVAL_MS, options.now);
  }

  /** Runs `op` within the timeout; on success clears the failing state, on failure records it and rethrows. */
  async run<T>(what: string, op: () => Promise<T>): Promise<T> {
    const { timeoutMs, messages, logger, plugin } = this.options;
    try {
      const result = await withTimeout(op(), timeoutMs, `${messages.timeout} within ${timeoutMs} ms`);
      if (this.failing) {
        this.failing = false;
        logger.info({ plugin, storeErrors: this.errors }, messages.recovered);
      }
      return result;
    } catch (err) {
      this.record(what, err);
      throw err;
    }
  }

  /** For calls whose failure changes nothing for the caller (giving back, settling): recorded, never thrown. */
  async quiet(what: string, op: () => Promise<unknown>): Promise<void> {
    await this.run(what, op).catch(() => {});
  }

  private record(what: string, err: unknown): void {
    this.errors++;
    this.failing = true;
    const sinceLastLog = this.throttle.due();
    if (sinceLastLog === null) return;
    const { plugin, mode, logger, messages } = this.options;
    logger.warn(
      { plugin, op: what, onStoreError: mode, storeErrors: this.errors, sinceLastLog, err: (err as Error)?.message ?? String(err) },
      messages.failed,
    );
  }
}
