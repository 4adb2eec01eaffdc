/**
 * Deadlines on store calls. A store that stops answering without closing its connections (a frozen Redis, a
 * stalled Postgres) would otherwise hold every request that touches it for as long as it stays silent. Each call
 * gets `timeoutMs`; a call that misses it rejects with StoreUnavailableError (503 STORE_UNAVAILABLE) while the
 * call itself goes on, so that what it did once the store wakes can still be undone (see lateOutcome).
 *
 * A missed deadline alone may be one slow call; a missed deadline with no other call answered since it began
 * means the store is not answering at all. It is then "stalled": calls fail at once instead of each waiting out
 * its own deadline (a request makes several), and one call at a time probes the store, at most once per
 * `timeoutMs`. The first call that succeeds, a probe or a late answer, ends the stall.
 */
import { GatewayError } from '../errors.ts';

export type StoreName = 'kv' | 'database';

const LABEL: Record<StoreName, string> = { kv: 'The KV', database: 'The database' };

export class StoreUnavailableError extends GatewayError {
  /**
   * The call itself when it was sent and may still complete; absent when it was never sent (the store was
   * stalled). Never rejects: a failure of the late call resolves to undefined.
   */
  readonly late: Promise<unknown> | undefined;

  constructor(readonly store: StoreName, message: string, late?: Promise<unknown>) {
    super('STORE_UNAVAILABLE', message, { store }, { 'Retry-After': '1' });
    this.name = 'StoreUnavailableError';
    this.late = late;
  }

  /** The same error, its late outcome seen through `map` (a caller that turns a store reply into its own result). */
  mapLate<T, R>(map: (late: T) => R): StoreUnavailableError {
    const late = this.late?.then((value) => (value === undefined ? undefined : map(value as T)));
    return Object.assign(new StoreUnavailableError(this.store, this.message, late), { stack: this.stack });
  }
}

/**
 * What a store call finally did, past any deadline: its result when it succeeded, early or late; undefined when
 * it failed or was never sent. For undoing what a call that its caller gave up on did after all.
 */
export function lateOutcome<T>(call: Promise<T>): Promise<T | undefined> {
  return call.catch((err: unknown) => (err instanceof StoreUnavailableError ? (err.late as Promise<T | undefined> | undefined) : undefined));
}

export interface DeadlineEvents {
  /** The store stopped answering (entered the stall) or answers again. */
  onStall?: (store: StoreName, stalled: boolean) => void;
}

export class StoreDeadline {
  private stalled = false;
  private probing = false;
  private nextProbeAt = 0;
  private lastAnswerAt = -Infinity;

  constructor(
    readonly store: StoreName,
    readonly timeoutMs: number,
    private readonly events: DeadlineEvents = {},
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Whether calls currently fail at once. */
  get isStalled(): boolean {
    return this.stalled;
  }

  run<T>(op: () => Promise<T>): Promise<T> {
    const started = this.now();
    let probe = false;
    if (this.stalled) {
      if (this.probing || started < this.nextProbeAt) {
        return Promise.reject(new StoreUnavailableError(this.store,
          `${LABEL[this.store]} is not answering: it missed its ${this.timeoutMs} ms deadline and has not answered since`));
      }
      this.probing = probe = true;
    }
    let call: Promise<T>;
    try {
      call = op();
    } catch (err) {
      if (probe) this.probing = false;
      return Promise.reject(err);
    }
    return new Promise<T>((resolve, reject) => {
      let missed = false;
      const timer = setTimeout(() => {
        missed = true;
        this.missed(started, probe);
        const late = call.then((value) => value, () => undefined);
        reject(new StoreUnavailableError(this.store, `${LABEL[this.store]} did not answer within ${this.timeoutMs} ms`, late));
      }, this.timeoutMs);
      call.then(
        (value) => {
          clearTimeout(timer);
          this.answered();
          if (probe && !missed) this.probing = false;
          resolve(value);
        },
        (err: unknown) => {
          clearTimeout(timer);
          // An error is not proof that the store answers (a refused connection fails at once), so the stall stays.
          if (probe && !missed) this.probing = false;
          reject(err);
        },
      );
    });
  }

  private missed(started: number, probe: boolean): void {
    if (probe) this.probing = false;
    // Something else answered while this call waited: the store works, this call was slow.
    if (this.lastAnswerAt >= started) return;
    this.nextProbeAt = this.now() + this.timeoutMs;
    if (this.stalled) return;
    this.stalled = true;
    this.events.onStall?.(this.store, true);
  }

  private answered(): void {
    this.lastAnswerAt = this.now();
    if (!this.stalled) return;
    this.stalled = false;
    this.probing = false;
    this.events.onStall?.(this.store, false);
  }
}
