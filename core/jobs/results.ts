/** What the runner accepts from callers and handlers, and what a handler that threw gets instead of a result. */
import type { JobResult, JobSpec } from './types.ts';

/** The longest delay between two retries of a handler that throws. */
export const MAX_BACKOFF_MS = 15 * 60_000;

const finite = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

export function checkSpec(spec: JobSpec): void {
  if (typeof spec.kind !== 'string' || spec.kind.length < 1 || spec.kind.length > 200) throw new TypeError('a job kind is a string of 1 to 200 characters');
  if (spec.key !== undefined && (typeof spec.key !== 'string' || spec.key.length < 1 || spec.key.length > 500)) {
    throw new TypeError('a job key is a string of 1 to 500 characters');
  }
  if (spec.runAt !== undefined && !finite(spec.runAt)) throw new TypeError('a job\'s runAt is ms since the epoch');
}

/** A handler written in JavaScript can return anything: what is not a JobResult is an error of that handler. */
export function checkResult(result: JobResult): JobResult {
  const r = result as Partial<Record<string, unknown>> | null | undefined;
  const ok = !!r && (
    r.status === 'done'
    || (r.status === 'retry' && finite(r.at) && typeof r.error === 'string')
    || (r.status === 'reschedule' && finite(r.at))
    || (r.status === 'failed' && typeof r.error === 'string'));
  if (!ok) throw new TypeError(`the handler returned ${JSON.stringify(result) ?? String(result)}, which is not a job result`);
  return result;
}

/**
 * A handler that threw is retried after backoffMs, doubled at each attempt (capped at MAX_BACKOFF_MS), until
 * its maxAttempts-th attempt has thrown: the job then fails with the last error.
 */
export function thrownResult(err: unknown, attempts: number, kind: { maxAttempts: number; backoffMs: number }, now: number): JobResult {
  const message = err instanceof Error ? err.message : String(err);
  if (attempts >= kind.maxAttempts) return { status: 'failed', error: `${message} (attempt ${attempts} of ${kind.maxAttempts})` };
  const delay = Math.min(kind.backoffMs * 2 ** Math.max(0, attempts - 1), MAX_BACKOFF_MS);
  return { status: 'retry', at: now + delay, error: message };
}
