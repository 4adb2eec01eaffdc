/**
 * The `vector-stores.expire` job: deletes stores (their files' rows and chunks cascade) and chunks past their
 * expires_at. One recurring job for the deployment, enqueued by every instance under one key (a no-op while it is
 * live); each run deletes in batches until nothing expired is left, then reschedules itself.
 */
import type { GatewayConfig } from '../config/types.ts';
import type { JobHandler, JobQueue, JobSpec } from '../jobs/types.ts';
import type { Log } from '../log.ts';
import type { Database } from '../store/database.ts';
import { expireVectorStores } from '../store/vector-chunks.ts';

export const VECTOR_STORES_EXPIRE = 'vector-stores.expire';
export const vectorStoresExpireJob: JobSpec = { kind: VECTOR_STORES_EXPIRE, key: VECTOR_STORES_EXPIRE, payload: {} };
const BATCH = 100;

export function vectorStoresExpiryHandler(deps: { db: Database; config: GatewayConfig; logger?: Log }): JobHandler {
  return async (ctx) => {
    let stores = 0;
    let chunks = 0;
    try {
      for (;;) {
        if (ctx.signal.aborted) break;
        const removed = await expireVectorStores(deps.db, ctx.now(), BATCH);
        stores += removed.stores;
        chunks += removed.chunks;
        if (removed.stores < BATCH && removed.chunks < BATCH) break;
      }
      if (stores + chunks > 0) deps.logger?.info({ stores, chunks }, 'vector-stores.expire: expired stores and chunks deleted');
    } catch (err) {
      if (!ctx.signal.aborted) deps.logger?.warn({ err }, 'vector-stores.expire: the sweep failed; the next one tries again');
    }
    return { status: 'reschedule', at: ctx.now() + deps.config.vectorStores.expirySweepMs };
  };
}

export async function registerVectorStoreExpiry(runner: JobQueue & { register(kind: string, handler: JobHandler): void }, deps: { db: Database; config: GatewayConfig; logger?: Log }): Promise<void> {
  runner.register(VECTOR_STORES_EXPIRE, vectorStoresExpiryHandler(deps));
  await runner.enqueue(vectorStoresExpireJob);
}
