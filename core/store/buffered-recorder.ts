/**
 * Hot-path records (usage) buffered in memory and written in batches: every `flushIntervalMs`, or as soon as
 * `batchSize` are queued, one multi-row write per batch. A failed write keeps its batch at the head of the queue
 * and is retried with jittered exponential backoff; nothing is ever dropped.
 *
 * Memory is bounded by `maxPending`, counted in slots: a request takes its slot when it is admitted (before it is
 * served) and gives it back when its record has been written. When every slot is taken (the database has been
 * refusing writes for a while), new requests wait for one before they are served: that is the back-pressure, and
 * it is logged once when it starts and once when it ends. Requests already admitted always get their record.
 *
 * close() waits for admitted requests to hand in their records, then retries the writes until the deadline; what
 * still cannot be written by then is logged in full (error lines), never silently lost.
 *
 * The records wait in an array, or in a queue of the recorder's owner (RecordQueue): the usage plugin's keeps them
 * as the bytes of their COPY rows (core/store/copy-binary-rows.ts).
 */
import type { Log as Logger } from '../log.ts';

export interface RecorderSettings {
  flushIntervalMs: number;
  batchSize: number;
  maxPending: number;
}

/** Where a recorder keeps the records it has not written yet, and how it hands a batch of them to `write`. */
export interface RecordQueue<T, Batch> {
  readonly length: number;
  /** Queues a record; throws for one it cannot keep (the recorder then logs that record in full). */
  push(record: T): void;
  /** The first `count` records (all of them, when fewer are queued), as `write` takes them. */
  batch(count: number): Batch;
  /** Forgets the first `count` records: they are written. */
  drop(count: number): void;
  /** Every queued record, no longer queued. */
  takeAll(): T[];
}

/** The default queue: the records themselves, in an array. */
export class ArrayQueue<T> implements RecordQueue<T, readonly T[]> {
  private items: T[] = [];

  get length(): number {
    return this.items.length;
  }

  push(record: T): void {
    this.items.push(record);
  }

  batch(count: number): readonly T[] {
    return this.items.slice(0, count);
  }

  drop(count: number): void {
    this.items.splice(0, count);
  }

  takeAll(): T[] {
    return this.items.splice(0);
  }
}

export interface RecorderOptions<T, Batch = readonly T[]> extends RecorderSettings {
  /** Writes one batch; must be idempotent (a batch whose answer was lost is written again). */
  write(batch: Batch): Promise<void>;
  /** Where records wait; an ArrayQueue when absent (then a batch is an array of records). */
  queue?: RecordQueue<T, Batch>;
  logger: Logger;
  /** First retry delay and its cap; defaults 100 ms and 30 s. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Math.random by default. */
  random?: () => number;
  /** What the records are, in log lines: `writing <label> records failed`. */
  label: string;
  /**
   * Takes the records close() could not write (a file to replay at the next start, say). When it is absent or
   * throws, they are logged in full instead.
   */
  onUnwritten?(records: T[]): Promise<void>;
}

interface Waiter {
  resolve(): void;
  reject(reason: unknown): void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How many records go in one log line when a shutdown could not write them. */
const RECORDS_PER_LOG_LINE = 100;

export class BufferedRecorder<T, Batch = readonly T[]> {
  private readonly queue: RecordQueue<T, Batch>;
  /** Admitted requests whose record has not been handed in yet. */
  private reserved = 0;
  private readonly waiters: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  /** Records at the head of the queue to be written whatever the size of their batch (see drain). */
  private due = 0;
  private failures = 0;
  private saturated: { since: number; waited: number } | undefined;
  private closing: Promise<void> | undefined;
  private finished = false;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly random: () => number;
  private readonly label: string;

  constructor(private readonly options: RecorderOptions<T, Batch>) {
    // Without a queue of its own, Batch is the default: an array of records.
    this.queue = options.queue ?? (new ArrayQueue<T>() as unknown as RecordQueue<T, Batch>);
    this.label = options.label;
    this.retryBaseMs = options.retryBaseMs ?? 100;
    this.retryMaxMs = options.retryMaxMs ?? 30_000;
    this.random = options.random ?? Math.random;
  }

  start(): this {
    this.timer ??= setInterval(() => this.kick(true), this.options.flushIntervalMs);
    this.timer.unref();
    return this;
  }

  /** Records waiting to be written. */
  get pending(): number {
    return this.queue.length;
  }

  /** Admitted requests that have not handed in their record yet. */
  get inFlight(): number {
    return this.reserved;
  }

  /** Requests waiting for a slot. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** Consecutive failed writes (0 once a write succeeds). */
  get failedWrites(): number {
    return this.failures;
  }

  private get used(): number {
    return this.queue.length + this.reserved;
  }

  /**
   * Takes the slot of one future record. Returns null at once when there is room (the usual case, no promise);
   * otherwise a promise that resolves when a slot is free, in arrival order, or rejects when `signal` aborts. A
   * signal given as a function is asked for only when the request must wait (a request's gw.signal is made on use).
   */
  admit(signal?: AbortSignal | (() => AbortSignal)): Promise<void> | null {
    if (this.waiters.length === 0 && this.used < this.options.maxPending) {
      this.reserved++;
      return null;
    }
    return this.wait(typeof signal === 'function' ? signal() : signal);
  }

  /** Hands in the record of an admitted request (it uses that request's slot). Never refuses, never drops. */
  record(item: T): void {
    if (this.reserved > 0) this.reserved--;
    if (this.finished) {
      // After close() has given up: the log is the last place this record can go.
      this.options.logger.error({ records: [item] }, `a ${this.label} record was made after shutdown: it is in this log line`);
      return;
    }
    try {
      this.queue.push(item);
    } catch (err) {
      // A record the queue cannot keep would fail every batch it joined: it goes to the log, and the rest is written.
      this.options.logger.error({ err, records: [item] }, `a ${this.label} record cannot be written: it is in this log line`);
      return;
    }
    if (this.batchReady) this.kick(false);
  }

  /** Writes everything queued now (waiting for a write in progress first); rejects if a write fails. */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
    if (this.queue.length === 0) return;
    this.clearRetry();
    this.due = this.queue.length;
    await this.run(true);
  }

  /**
   * Stops the timer, waits (until the deadline) for admitted requests to hand in their records, and writes
   * everything, retrying failed writes until the deadline. What is still unwritten then is logged in full.
   */
  close(timeoutMs: number): Promise<void> {
    this.closing ??= this.shutdown(timeoutMs);
    return this.closing;
  }

  private async shutdown(timeoutMs: number): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    const deadline = Date.now() + timeoutMs;
    while (this.reserved > 0 && Date.now() < deadline) await sleep(5);
    let delay = this.retryBaseMs;
    for (;;) {
      try {
        await this.flush();
      } catch {
        // logged by the write; retried below until the deadline
      }
      if (this.queue.length === 0 && this.reserved === 0) break;
      const left = deadline - Date.now();
      if (left <= 0) break;
      await sleep(Math.min(delay, left));
      delay = Math.min(delay * 2, this.retryMaxMs);
    }
    while (this.writing) await this.writing;
    this.clearRetry();
    this.finished = true;
    for (const waiter of this.waiters.splice(0)) {
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.reject(new Error(`the ${this.label} recorder has shut down`));
    }
    if (this.queue.length > 0 || this.reserved > 0) {
      const lost = this.queue.takeAll();
      if (this.options.onUnwritten && lost.length > 0) {
        try {
          await this.options.onUnwritten(lost);
          return;
        } catch (err) {
          this.options.logger.error({ err }, `${this.label}: the unwritten records could not be kept aside: they follow in the log`);
        }
      }
      this.options.logger.error(
        { unwritten: lost.length, stillInFlight: this.reserved },
        `${this.label}: ${lost.length} records could not be written before shutdown; each follows in an error log line`,
      );
      for (let i = 0; i < lost.length; i += RECORDS_PER_LOG_LINE) {
        this.options.logger.error({ records: lost.slice(i, i + RECORDS_PER_LOG_LINE) }, `unwritten ${this.label} records`);
      }
    }
  }

  private wait(signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (!this.saturated) {
      this.saturated = { since: Date.now(), waited: 0 };
      this.options.logger.error(
        { maxPending: this.options.maxPending, pending: this.queue.length, inFlight: this.reserved, failedWrites: this.failures },
        `${this.label} queue full: ${this.options.maxPending} records wait to be written; new requests wait for room (back-pressure) until the database accepts writes`,
      );
    }
    this.saturated.waited++;
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve, reject, signal,
        onAbort: () => {
          const at = this.waiters.indexOf(waiter);
          if (at !== -1) this.waiters.splice(at, 1);
          reject(signal!.reason);
          this.endSaturation();
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Gives freed slots to waiting requests, first come first served. */
  private admitWaiters(): void {
    while (this.waiters.length > 0 && this.used < this.options.maxPending) {
      const waiter = this.waiters.shift()!;
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      this.reserved++;
      waiter.resolve();
    }
    this.endSaturation();
  }

  private endSaturation(): void {
    if (!this.saturated || this.waiters.length > 0) return;
    this.options.logger.warn(
      { waited: this.saturated.waited, ms: Date.now() - this.saturated.since },
      `${this.label} queue has room again: requests are admitted without waiting`,
    );
    this.saturated = undefined;
  }

  private clearRetry(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  /**
   * Starts a background write unless one runs or a retry is scheduled. `everything` (the interval, a retry): what
   * is queued now is due whatever its batch's size, also when a write is running (it goes on with them).
   */
  private kick(everything: boolean): void {
    if (everything) this.due = this.queue.length;
    if (this.writing || this.retryTimer || this.queue.length === 0 || this.finished) return;
    void this.run(false);
  }

  private run(rethrow: boolean): Promise<void> {
    const run = this.drain(rethrow);
    const settled: Promise<void> = run.then(() => {}, () => {}).then(() => {
      if (this.writing === settled) this.writing = undefined;
    });
    this.writing = settled;
    return run;
  }

  /** A batch is full, or every slot is taken (maxPending below batchSize): a write starts now. */
  private get batchReady(): boolean {
    return this.queue.length >= this.options.batchSize || (this.queue.length > 0 && this.used >= this.options.maxPending);
  }

  /**
   * Writes batches from the head of the queue while records are due (queued when the interval fired or a flush
   * began) or a batch is ready, or until a write fails. The records that arrive during a write wait for their
   * batch to fill or for the interval: written as soon as the write before them ended, they made batches of about
   * 50 rows at 2,000-3,000 requests/s, and the embedded database spends about half again as much per row on such
   * batches as on batches of 500 (bench/analysis.md). Draining until the queue was empty would do the same under
   * steady load, where it is never empty.
   */
  private async drain(rethrow: boolean): Promise<void> {
    while (this.due > 0 ? this.queue.length > 0 : this.batchReady) {
      const count = Math.min(this.options.batchSize, this.queue.length);
      const batch = this.queue.batch(count);
      try {
        await this.options.write(batch);
      } catch (err) {
        this.failures++;
        const retryInMs = this.backoff();
        this.options.logger.warn(
          { err, pending: this.queue.length, batch: count, attempt: this.failures, retryInMs },
          `writing ${this.label} records failed: the batch is kept and retried`,
        );
        if (!this.finished && !this.closing) {
          this.clearRetry();
          this.retryTimer = setTimeout(() => {
            this.retryTimer = undefined;
            this.kick(true);
          }, retryInMs);
          this.retryTimer.unref();
        }
        if (rethrow) throw err;
        return;
      }
      this.queue.drop(count);
      this.due = Math.max(0, this.due - count);
      if (this.failures > 0) {
        this.options.logger.info({ failedAttempts: this.failures, pending: this.queue.length }, `${this.label} records are written again`);
        this.failures = 0;
      }
      this.admitWaiters();
    }
  }

  /** Jittered exponential backoff: between half and all of base x 2^(failures-1), capped. */
  private backoff(): number {
    const ceiling = Math.min(this.retryMaxMs, this.retryBaseMs * 2 ** Math.min(this.failures - 1, 30));
    return Math.round(ceiling / 2 + this.random() * (ceiling / 2));
  }
}
