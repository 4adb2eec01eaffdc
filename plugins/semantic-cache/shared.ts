/**
 * What every entry of the plugin shares in one gateway: the stores, the writes still in flight (awaited at
 * shutdown, and by tests), the throttled log of failures, and when expired rows were last pruned.
 */
import { LogThrottle } from '../../core/log-throttle.ts';
import type { PluginServices } from '../../core/pipeline/services.ts';
import { ExactStore, SemanticStore } from './stores.ts';

/** One log line per kind of failure per interval at most, with the count it stands for. */
const LOG_INTERVAL_MS = 10_000;
/** Expired rows are pruned at most this often per instance, after a write. */
const PRUNE_INTERVAL_MS = 60_000;

export class CacheShared {
  readonly exact: ExactStore;
  readonly semantic: SemanticStore;
  private readonly writes = new Set<Promise<void>>();
  private readonly storeLog = new LogThrottle(LOG_INTERVAL_MS);
  private readonly embeddingLog = new LogThrottle(LOG_INTERVAL_MS);
  private lastPruneAt = -Infinity;

  constructor(readonly services: PluginServices) {
    this.exact = new ExactStore(services.kv, services.clock);
    this.semantic = new SemanticStore(services.db, services.clock);
    services.onClose(() => this.idle());
  }

  /** Runs a store call; a failure (the store's deadline included) is logged and answers null: a miss. */
  async quietly<T>(what: string, op: () => Promise<T>): Promise<T | null> {
    try {
      return await op();
    } catch (err) {
      const events = this.storeLog.due();
      if (events !== null) {
        this.services.logger.warn({ plugin: 'semantic-cache', op: what, events, err: (err as Error)?.message ?? String(err) },
          'semantic-cache: a store failed; requests go on as misses');
      }
      return null;
    }
  }

  embeddingFailed(model: string, err: unknown): void {
    const events = this.embeddingLog.due();
    if (events === null) return;
    this.services.logger.warn({ plugin: 'semantic-cache', model, events, err: (err as Error)?.message ?? String(err) },
      'semantic-cache: embedding a conversation failed; requests go on without semantic hits');
  }

  /** Keeps a write (after the answer was sent) in view until it ends; it never rejects. */
  track(write: Promise<void>): void {
    const tracked = write.catch((err) => this.services.logger.error({ plugin: 'semantic-cache', err }, 'semantic-cache: storing an answer failed'))
      .finally(() => this.writes.delete(tracked));
    this.writes.add(tracked);
  }

  /** Resolves once every write started so far has ended. */
  async idle(): Promise<void> {
    while (this.writes.size > 0) await Promise.all([...this.writes]);
  }

  /** Deletes a bounded batch of expired rows, at most once per PRUNE_INTERVAL_MS. */
  pruneSometimes(): void {
    const now = this.services.clock.now();
    if (now - this.lastPruneAt < PRUNE_INTERVAL_MS) return;
    this.lastPruneAt = now;
    this.track(this.quietly('prune', () => this.semantic.prune()).then(() => undefined));
  }
}
