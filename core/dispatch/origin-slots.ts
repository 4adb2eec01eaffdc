/**
 * The per-origin limit on requests in flight (upstream.connectionsPerOrigin) with a bounded wait for a free
 * slot (upstream.queueTimeoutMs). undici's pool queues requests past its connections without any deadline, so a
 * full pool would make callers wait a whole stream in silence; this queue refuses them in time instead.
 */
import type { Logger } from '../logger.ts';
import { onAbort as subscribe, type CallSignal } from '../pipeline/abort.ts';
import { UpstreamPoolFullError } from './upstream-errors.ts';

interface Waiter {
  grant(): void;
  timer: NodeJS.Timeout | undefined;
}

interface Origin {
  inFlight: number;
  /** FIFO; the head is `waiting[head]`, so taking from it costs nothing. */
  waiting: Array<Waiter | undefined>;
  head: number;
  /** Refusals not yet logged, and when the last warn line went out. */
  refusedSinceLog: number;
  loggedAt: number;
}

export interface OriginPoolState {
  origin: string;
  inFlight: number;
  queued: number;
}

/** At most one warn line per origin in this long: a saturated pool refuses hundreds of requests a second. */
const LOG_INTERVAL_MS = 10_000;

export class OriginSlots {
  private readonly origins = new Map<string, Origin>();

  constructor(
    private readonly limit: number,
    private readonly queueTimeoutMs: number,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A free slot taken within the call (its release), or undefined when the origin is full or the call aborted:
   * acquire then queues, or refuses. Most requests find a slot free, and need no promise for it.
   */
  tryAcquire(origin: string, signal: CallSignal): (() => void) | undefined {
    if (signal.aborted) return undefined;
    const entry = this.stateOf(origin);
    if (entry.inFlight >= this.limit) return undefined;
    entry.inFlight++;
    return this.releaser(origin, entry);
  }

  /**
   * Resolves with a release function once a slot is free; rejects with UpstreamPoolFullError when none frees
   * within the queue timeout, or with the signal's reason when the caller leaves while waiting.
   */
  acquire(origin: string, signal: CallSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const entry = this.stateOf(origin);
    if (entry.inFlight < this.limit) {
      entry.inFlight++;
      return Promise.resolve(this.releaser(origin, entry));
    }
    if (this.queueTimeoutMs === 0) return Promise.reject(this.refuse(origin, entry));
    return new Promise((resolve, reject) => {
      const leave = () => {
        const at = entry.waiting.indexOf(waiter, entry.head);
        if (at !== -1) entry.waiting[at] = undefined;
        clearTimeout(waiter.timer);
        unsubscribe();
        this.forgetIfIdle(origin, entry);
      };
      const waiter: Waiter = {
        timer: setTimeout(() => {
          leave();
          reject(this.refuse(origin, entry));
        }, this.queueTimeoutMs),
        grant: () => {
          clearTimeout(waiter.timer);
          unsubscribe();
          resolve(this.releaser(origin, entry));
        },
      };
      entry.waiting.push(waiter);
      const unsubscribe = subscribe(signal, (reason) => {
        leave();
        reject(reason);
      });
    });
  }

  state(): OriginPoolState[] {
    return [...this.origins].map(([origin, s]) => ({ origin, inFlight: s.inFlight, queued: this.queued(s) }));
  }

  private stateOf(origin: string): Origin {
    let state = this.origins.get(origin);
    if (!state) {
      state = { inFlight: 0, waiting: [], head: 0, refusedSinceLog: 0, loggedAt: -Infinity };
      this.origins.set(origin, state);
    }
    return state;
  }

  private releaser(origin: string, entry: Origin): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.takeWaiter(entry);
      // The slot passes to the next waiter as it is: in-flight stays the same.
      if (next) next.grant();
      else {
        entry.inFlight--;
        this.forgetIfIdle(origin, entry);
      }
    };
  }

  private takeWaiter(entry: Origin): Waiter | undefined {
    while (entry.head < entry.waiting.length) {
      const waiter = entry.waiting[entry.head++];
      if (waiter) return waiter;
    }
    entry.waiting.length = 0;
    entry.head = 0;
    return undefined;
  }

  private queued(entry: Origin): number {
    let count = 0;
    for (let i = entry.head; i < entry.waiting.length; i++) if (entry.waiting[i]) count++;
    return count;
  }

  /** Origins come and go (absolute follow-up URLs): an idle one keeps no entry, unless its log interval runs. */
  private forgetIfIdle(origin: string, entry: Origin): void {
    if (entry.inFlight > 0 || this.queued(entry) > 0) return;
    if (entry.refusedSinceLog === 0 && this.now() - entry.loggedAt >= LOG_INTERVAL_MS) this.origins.delete(origin);
    else if (entry.head > 0) {
      entry.waiting.length = 0;
      entry.head = 0;
    }
  }

  private refuse(origin: string, entry: Origin): UpstreamPoolFullError {
    const queued = this.queued(entry);
    entry.refusedSinceLog++;
    const now = this.now();
    if (now - entry.loggedAt >= LOG_INTERVAL_MS) {
      this.logger.warn(
        { origin, connectionsPerOrigin: this.limit, inFlight: entry.inFlight, queued, queueTimeoutMs: this.queueTimeoutMs, refused: entry.refusedSinceLog },
        'upstream pool full: requests refused with 503 UPSTREAM_UNAVAILABLE after waiting upstream.queueTimeoutMs for a connection',
      );
      entry.loggedAt = now;
      entry.refusedSinceLog = 0;
    }
    return new UpstreamPoolFullError(this.limit, this.queueTimeoutMs);
  }
}
