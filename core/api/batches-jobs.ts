/** The batch job kinds on the gateway's job runner: status polling and settlement. */
import type { JobRunner } from '../jobs/runner.ts';
import { BATCH_POLL, BATCH_SETTLE, type BatchJobDeps } from './batches-common.ts';
import { batchPollHandler } from './batches-poll.ts';
import { batchSettleHandler } from './batches-settle.ts';

export function registerBatchJobs(runner: Pick<JobRunner, 'register'>, deps: BatchJobDeps): void {
  // A poll throws only when the database fails it (a provider's failure is polled again at the cadence): it is
  // retried for as long as a long database outage lasts, up to 15 minutes apart.
  runner.register(BATCH_POLL, batchPollHandler(deps), { maxAttempts: 20, backoffMs: 1000 });
  // Settlement retries a provider or a recorder that fails, for about half an hour before it is kept as failed.
  runner.register(BATCH_SETTLE, batchSettleHandler(deps), { maxAttempts: 10, backoffMs: 5000 });
}
