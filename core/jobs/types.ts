/**
 * The job runner's contract (runner.ts implements it): background work that must survive a restart or a kill -9
 * (batch polling, webhook delivery) is a row in the `jobs` table, claimed under a lease by one instance at a time.
 */
import type { Queryable } from '../store/database.ts';

export interface JobSpec {
  /** What runs it: the kind a handler is registered under ('webhook.deliver', 'batch.poll', ...). */
  kind: string;
  /** Dedupe: at most one pending or running job per key; enqueueing a live key is a no-op returning its id. */
  key?: string;
  /** JSON. */
  payload: unknown;
  /** Ms since the epoch; default now. */
  runAt?: number;
}

export interface JobRecord {
  id: string;
  kind: string;
  key: string | null;
  payload: unknown;
  /** Runs so far, this one included (1 on the first); reset to 0 by a reschedule. */
  attempts: number;
  runAt: number;
  createdAt: number;
}

export interface JobContext {
  /** attempts already counts this run, and was saved before the handler was called. */
  job: JobRecord;
  /** Aborted at shutdown or when the lease is lost: the handler should stop, its result is not saved. */
  signal: AbortSignal;
  now(): number;
}

export type JobResult =
  | { status: 'done' }
  /** Run again at `at` (the backoff is the handler's choice). */
  | { status: 'retry'; at: number; error: string }
  /** A recurring job (polling): its next run, with attempts reset to 0 and optionally a new payload. */
  | { status: 'reschedule'; at: number; payload?: unknown }
  /** Terminal, kept for inspection. */
  | { status: 'failed'; error: string };

export type JobHandler = (ctx: JobContext) => Promise<JobResult>;

export interface JobQueue {
  /** Inside `tx` when given, so a job is enqueued in the same transaction as the record it is for. */
  enqueue(spec: JobSpec, tx?: Queryable): Promise<string>;
}
