/**
 * The gateway's one job runner. Every pollIntervalMs (and at once after an enqueue due now) it claims up to
 * `concurrency` minus what it is running, runs each job's handler, keeps the leases of long runs alive, and saves
 * each result. A database outage is logged (throttled) and waited out; nothing here throws into the process.
 * docs/operations.md "Jobs" describes what operators see.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Log } from '../log.ts';
import { LogThrottle } from '../log-throttle.ts';
import type { Queryable } from '../store/database.ts';
import { JobStore, type ClaimedJob } from './store.ts';
import { checkResult, checkSpec, thrownResult } from './results.ts';
import type { JobHandler, JobQueue, JobRecord, JobResult, JobSpec } from './types.ts';

export interface JobRunnerOptions {
  db: Queryable;
  logger: Log;
  now?: () => number;
  pollIntervalMs: number;
  leaseMs: number;
  concurrency: number;
  /** How long stop() waits for running handlers before aborting them. */
  shutdownTimeoutMs: number;
}

/** How a kind's handler is retried when it throws (a result it returns is its own choice). */
export interface KindOptions {
  /** Runs that may end by throwing or by their instance dying; the last one fails the job. Default 5. */
  maxAttempts?: number;
  /** The first retry's delay; each later one doubles it, up to 15 minutes. Default 1000. */
  backoffMs?: number;
}

interface Kind {
  handler: JobHandler;
  maxAttempts: number;
  backoffMs: number;
}

interface Run {
  job: ClaimedJob;
  controller: AbortController;
  /** Set once the handler answered; the run stays here (its lease renewed) until the result is saved. */
  result?: JobResult;
  writing?: boolean;
  /** Its lease is gone (lost, or released at shutdown): its result is dropped. */
  abandoned?: boolean;
  settled: Promise<void>;
}

const LOG_EVERY_MS = 60_000;

export class JobRunner implements JobQueue {
  /** This instance's lease owner: host, pid and a random part, for operators reading the table. */
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly store: JobStore;
  private readonly now: () => number;
  private readonly kinds = new Map<string, Kind>();
  private readonly runs = new Map<string, Run>();
  private readonly throttle: LogThrottle;
  private state: 'idle' | 'started' | 'stopping' = 'idle';
  private pollTimer: NodeJS.Timeout | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private again = false;
  /** The last claim filled every free slot: more may be due as soon as one frees. */
  private saturated = false;
  private stopping: Promise<void> | undefined;

  constructor(private readonly options: JobRunnerOptions) {
    this.now = options.now ?? Date.now;
    this.store = new JobStore(options.db, this.owner, options.leaseMs);
    this.throttle = new LogThrottle(LOG_EVERY_MS, this.now);
  }

  register(kind: string, handler: JobHandler, options: KindOptions = {}): void {
    if (this.kinds.has(kind)) throw new Error(`a handler for job kind "${kind}" is registered already`);
    this.kinds.set(kind, { handler, maxAttempts: options.maxAttempts ?? 5, backoffMs: options.backoffMs ?? 1000 });
  }

  async enqueue(spec: JobSpec, tx?: Queryable): Promise<string> {
    checkSpec(spec);
    const now = this.now();
    const id = await this.store.enqueue(spec, now, tx);
    // Inside a transaction the row is not visible before the commit: the next poll finds it.
    if (!tx && (spec.runAt ?? now) <= now) this.wake();
    return id;
  }

  start(): void {
    if (this.state !== 'idle') return;
    this.state = 'started';
    this.stopping = undefined;
    this.renewTimer = setInterval(() => void this.renew(), Math.max(1, Math.floor(this.options.leaseMs / 2)));
    this.wake();
  }

  /**
   * No new claims; running handlers get until shutdownTimeoutMs to finish, then their signals are aborted and
   * their jobs handed back (pending, due now) for another instance or the next start.
   */
  stop(): Promise<void> {
    if (this.state !== 'started') return this.stopping ?? Promise.resolve();
    this.state = 'stopping';
    this.stopping = this.drain().finally(() => {
      clearInterval(this.renewTimer);
      this.state = 'idle';
    });
    return this.stopping;
  }

  /** Jobs this instance runs now (results not yet saved included). */
  get active(): number {
    return this.runs.size;
  }

  private async drain(): Promise<void> {
    clearTimeout(this.pollTimer);
    await this.ticking;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => { timer = setTimeout(resolve, this.options.shutdownTimeoutMs); });
    await Promise.race([Promise.all([...this.runs.values()].map((run) => run.settled)), deadline]);
    clearTimeout(timer);
    await this.flush();
    const left = [...this.runs.values()];
    for (const run of left) {
      run.abandoned = true;
      run.controller.abort(new Error('the gateway is shutting down'));
    }
    this.runs.clear();
    if (left.length === 0) return;
    this.options.logger.warn({ jobs: left.map((r) => r.job.id) }, 'jobs still running at the shutdown deadline: handed back for the next start');
    try {
      await this.store.release(left.map(({ job }) => job), this.now());
    } catch (err) {
      this.storeFailed(err, 'handing running jobs back failed: they run again once their leases expire');
    }
  }

  /** A claim now, or right after the one in flight. */
  private wake(): void {
    if (this.state !== 'started') return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = this.tick().finally(() => {
      this.ticking = undefined;
      if (this.state !== 'started') return;
      if (this.again) {
        this.again = false;
        this.wake();
      } else {
        this.pollTimer = setTimeout(() => this.wake(), this.options.pollIntervalMs);
      }
    });
  }

  private async tick(): Promise<void> {
    clearTimeout(this.pollTimer);
    await this.flush();
    const free = this.options.concurrency - this.runs.size;
    if (free <= 0) return;
    let claimed: ClaimedJob[];
    try {
      claimed = await this.store.claim(free, this.now());
    } catch (err) {
      this.storeFailed(err, 'claiming jobs failed; retrying at the next poll');
      return;
    }
    this.saturated = claimed.length === free;
    // Claimed while stopping began: the handler may still run, and stop() waits for it like any other.
    for (const job of claimed) this.run(job);
  }

  private run(job: ClaimedJob): void {
    // The same instance took the job again after losing its lease: the old run is over.
    const previous = this.runs.get(job.id);
    if (previous) this.abandon(previous, 'its lease expired and the job was claimed again');
    const controller = new AbortController();
    const run: Run = { job, controller, settled: Promise.resolve() };
    this.runs.set(job.id, run);
    run.settled = this.execute(run).then((result) => {
      if (run.abandoned) return;
      run.result = result;
      return this.save(run);
    });
  }

  private async execute({ job, controller }: Run): Promise<JobResult> {
    const kind = this.kinds.get(job.kind);
    const log = { jobId: job.id, kind: job.kind, attempts: job.attempts };
    if (!kind) {
      this.options.logger.error(log, 'no handler is registered for this job kind: the job failed');
      return { status: 'failed', error: `no handler is registered for job kind "${job.kind}"` };
    }
    if (job.reclaimed && job.attempts > kind.maxAttempts) {
      return { status: 'failed', error: `attempt ${job.attempts - 1} of ${kind.maxAttempts} never finished (its instance stopped or lost the lease)` };
    }
    const record: JobRecord = { id: job.id, kind: job.kind, key: job.key, payload: job.payload, attempts: job.attempts, runAt: job.runAt, createdAt: job.createdAt };
    try {
      return checkResult(await kind.handler({ job: record, signal: controller.signal, now: this.now }));
    } catch (err) {
      if (!controller.signal.aborted) this.options.logger.warn({ ...log, err }, 'a job handler threw');
      return thrownResult(err, job.attempts, kind, this.now());
    }
  }

  private async save(run: Run): Promise<void> {
    if (run.writing || !run.result) return;
    run.writing = true;
    try {
      const held = await this.store.finish(run.job, run.result);
      if (!held) this.options.logger.warn({ jobId: run.job.id, kind: run.job.kind }, 'a job lost its lease before its result was saved: the result is dropped');
      if (this.runs.get(run.job.id) === run) this.runs.delete(run.job.id);
      if (this.saturated) this.wake();
    } catch (err) {
      // Kept, its lease renewed, and written again at the next poll.
      this.storeFailed(err, 'saving a job result failed; retrying at the next poll');
    } finally {
      run.writing = false;
    }
  }

  /** Results the database refused earlier. */
  private async flush(): Promise<void> {
    await Promise.all([...this.runs.values()].filter((run) => run.result && !run.abandoned).map((run) => this.save(run)));
  }

  private async renew(): Promise<void> {
    const held = [...this.runs.values()];
    if (held.length === 0) return;
    let kept: Set<string>;
    try {
      kept = await this.store.renew(held.map(({ job }) => job));
    } catch (err) {
      this.storeFailed(err, 'renewing job leases failed; retrying');
      return;
    }
    for (const run of held) {
      if (!kept.has(run.job.id) && this.runs.get(run.job.id) === run) this.abandon(run, 'its lease was lost');
    }
  }

  private abandon(run: Run, why: string): void {
    run.abandoned = true;
    run.controller.abort(new Error(`job ${run.job.id}: ${why}`));
    if (this.runs.get(run.job.id) === run) this.runs.delete(run.job.id);
    this.options.logger.warn({ jobId: run.job.id, kind: run.job.kind }, `a running job was abandoned: ${why}`);
  }

  private storeFailed(err: unknown, message: string): void {
    const events = this.throttle.due();
    if (events !== null) this.options.logger.warn({ err, events }, `jobs: ${message}`);
  }
}
