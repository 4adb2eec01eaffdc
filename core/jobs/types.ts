/** The durable job runner's contract: what a job is, what its handler gets and what it answers. */
import type { Queryable } from '../store/database.ts';

export interface JobSpec {
  kind: string;                 // 'webhook.deliver', 'batch.poll', ...
  key?: string;                 // dedupe: at most one pending/running job per key (enqueue of a live key is a no-op returning its id)
  payload: unknown;             // JSON
  runAt?: number;               // ms since epoch; default now
}
export interface JobRecord { id: string; kind: string; key: string | null; payload: unknown; attempts: number; runAt: number; createdAt: number }
export interface JobContext {
  job: JobRecord;               // attempts already counts this run (1 on the first), persisted BEFORE the handler runs
  signal: AbortSignal;          // aborted at shutdown or when the lease is lost
  now(): number;
}
export type JobResult =
  | { status: 'done' }
  | { status: 'retry'; at: number; error: string }          // run again at `at` (backoff is the handler's choice)
  | { status: 'reschedule'; at: number; payload?: unknown } // a recurring job (polling): next run, attempts reset to 0
  | { status: 'failed'; error: string };                     // terminal, kept for inspection
export type JobHandler = (ctx: JobContext) => Promise<JobResult>;
export interface JobQueue {
  /** Inside `tx` when given, so a job is enqueued in the same transaction as the record it is for. */
  enqueue(spec: JobSpec, tx?: Queryable): Promise<string>;
}
