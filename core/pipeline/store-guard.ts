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

const noop = () => {};
const isThenable = <T>(value: T | PromiseLike<T>): value is PromiseLike<T> => typeof (value as { then?: unknown } | null)?.then === 'function';

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

  /**
   * Runs `op`; on success clears the failing state, on failure records it and rethrows. A promise is bounded by
   * the timeout; a result given at once (an in-process store's, kv.runNow) is returned as it is, without a timer
   * or a promise: an in-process map cannot stall. A throw from `op` is a failure either way.
   */
  run<T>(what: string, op: () => T | Promise<T>): T | Promise<T> {
    let result: T | Promise<T>;
    try {
      result = op();
    } catch (err) {
      this.record(what, err);
      throw err;
    }
    if (!isThenable(result)) {
      this.succeeded();
      return result;
    }
    return this.bounded(what, Promise.resolve(result));
  }

  /** For calls whose failure changes nothing for the caller (giving back, settling): recorded, never thrown. */
  quiet(what: string, op: () => unknown): void | Promise<void> {
    let result: unknown;
    try {
      result = this.run(what, op);
    } catch {
      return;
    }
    if (isThenable(result)) return Promise.resolve(result).then(noop, noop);
  }

  private async bounded<T>(what: string, work: Promise<T>): Promise<T> {
    const { timeoutMs, messages } = this.options;
    try {
      const result = await withTimeout(work, timeoutMs, `${messages.timeout} within ${timeoutMs} ms`);
      this.succeeded();
      return result;
    } catch (err) {
      this.record(what, err);
      throw err;
    }
  }

  private succeeded(): void {
    if (!this.failing) return;
    this.failing = false;
    this.options.logger.info({ plugin: this.options.plugin, storeErrors: this.errors }, this.options.messages.recovered);
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
