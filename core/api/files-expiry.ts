/**
 * The `files.expire` job: deletes registry entries past their expires_at, each after its provider file. One
 * recurring job serves the whole deployment: every instance enqueues it at start under one fixed key, which is a
 * no-op while it is live, and the runner's lease gives each run to one instance. Each run reads the expired entries
 * in batches until none is left, then reschedules itself files.expirySweepMs later.
 *
 * A provider that answers 404 for the file no longer has it: the entry goes. Any other failure keeps the entry for
 * the next run; one that says the provider itself is unwell (5xx, timeout, an open breaker) also leaves the rest of
 * that provider's entries to the next run rather than calling it once per file.
 */
import type { GatewayConfig } from '../config/types.ts';
import type { CallDeps } from '../dispatch/exchange.ts';
import { deleteProviderFile } from '../dispatch/files-call.ts';
import { passthroughTargets } from '../dispatch/passthrough.ts';
import type { ProviderRegistry } from '../dispatch/provider-registry.ts';
import { shouldFallBack } from '../dispatch/upstream-errors.ts';
import type { JobContext, JobHandler, JobQueue, JobSpec } from '../jobs/types.ts';
import type { Log } from '../log.ts';
import type { Queryable } from '../store/database.ts';
import { expiredFiles, removeFile } from '../store/files.ts';

export const FILES_EXPIRE = 'files.expire';

/** The deployment's one sweep job: its fixed key makes every instance's enqueue name the same job. */
export const filesExpireJob: JobSpec = { kind: FILES_EXPIRE, key: FILES_EXPIRE, payload: {} };

export interface FilesExpiryDeps extends CallDeps {
  db: Queryable;
  config: GatewayConfig;
  providers: ProviderRegistry;
  logger?: Log;
}

interface Sweep {
  removed: number;
  failed: number;
}

async function sweep(deps: FilesExpiryDeps, ctx: JobContext): Promise<Sweep> {
  const targets = passthroughTargets(deps.config, deps.providers);
  const now = ctx.now();
  const skipIds: string[] = [];
  const skipProviders: string[] = [];
  const result: Sweep = { removed: 0, failed: 0 };
  // Every entry read is removed or skipped, so each batch moves on and the loop ends.
  for (;;) {
    const batch = await expiredFiles(deps.db, now, deps.config.files.expiryBatchSize, skipIds, skipProviders);
    if (batch.length === 0) return result;
    for (const file of batch) {
      if (ctx.signal.aborted) return result;
      if (skipProviders.includes(file.provider)) continue;
      const entry = targets.get(file.provider);
      try {
        // A provider no longer configured cannot be reached: its entry goes, its file stays to the provider's TTL.
        if (entry) await deleteProviderFile(deps, entry.provider, entry.target, file.providerFileId, ctx.signal);
        await removeFile(deps.db, file.tenantId, file.id);
        result.removed++;
      } catch (err) {
        if (ctx.signal.aborted) return result;
        result.failed++;
        if (shouldFallBack(err)) skipProviders.push(file.provider);
        else skipIds.push(file.id);
        deps.logger?.warn({ err, file: file.id, provider: file.provider }, 'files.expire: deleting an expired file failed; the next sweep tries again');
      }
    }
  }
}

export function filesExpiryHandler(deps: FilesExpiryDeps): JobHandler {
  return async (ctx) => {
    try {
      const { removed, failed } = await sweep(deps, ctx);
      if (removed + failed > 0) deps.logger?.info({ removed, failed }, 'files.expire: expired files deleted');
    } catch (err) {
      // The database, most likely: a recurring job must not fail for good, so the next sweep tries again.
      if (!ctx.signal.aborted) deps.logger?.warn({ err }, 'files.expire: the sweep failed; the next one tries again');
    }
    return { status: 'reschedule', at: ctx.now() + deps.config.files.expirySweepMs };
  };
}

/** Registers the sweep on the runner and enqueues it (a no-op when it is live already, from any instance). */
export async function registerFileJobs(runner: JobQueue & { register(kind: string, handler: JobHandler): void }, deps: FilesExpiryDeps): Promise<void> {
  runner.register(FILES_EXPIRE, filesExpiryHandler(deps));
  await runner.enqueue(filesExpireJob);
}
