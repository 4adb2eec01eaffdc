/**
 * The identity caches over the KV, resilient to the KV: a read that fails is a miss (the database answers),
 * a write that fails is skipped. Authentication keeps working through a Redis outage, at the cost of a database
 * round trip per request; it logs that (once a minute at most) and counts the failures. A KV that does not answer
 * fails by its deadline (storage.kvTimeoutMs), so a frozen Redis costs at most that, then nothing while it stays
 * stalled (core/store/deadline.ts). The budget lists use the same cache.
 */
import { GatewayError } from '../errors.ts';
import { LogThrottle } from '../log-throttle.ts';
import type { PluginKv, PluginLogger } from '../pipeline/services.ts';
import { defineKvOperation, type KvOperation } from '../store/kv-operation.ts';

/** MGET as a KV operation, so that the in-process KV answers it within the call (kv.runNow). */
export const readMany = defineKvOperation<readonly string[], Array<string | null>>({
  name: 'identity.readMany',
  redis: {
    lua: "return redis.call('MGET', unpack(KEYS))",
    keys: (keys) => [...keys],
    argv: () => [],
    parse: (reply) => (reply as Array<string | null>).map((value) => value ?? null),
  },
  memory: (kv, keys) => keys.map((key) => kv.get(key)),
});

/** GET as a KV operation: one cached value read within the call by the in-process KV (IdentityCache.getNow). */
export const readOne = defineKvOperation<string, string | null>({
  name: 'identity.readOne',
  redis: {
    lua: "return redis.call('GET', KEYS[1])",
    keys: (key) => [key],
    argv: () => [],
    parse: (reply) => (reply as string | null) ?? null,
  },
  memory: (kv, key) => kv.get(key),
});

const LOG_EVERY_MS = 60_000;

export class IdentityCache {
  /** KV calls that failed since start. */
  failures = 0;
  private readonly throttle: LogThrottle;

  constructor(
    private readonly kv: PluginKv,
    private readonly logger: PluginLogger | undefined,
    now: () => number = Date.now,
    /** Logged (warn) when the KV fails, at most once a minute. */
    private readonly outage = 'the KV is unreachable: identity lookups go to the database until it answers',
  ) {
    this.throttle = new LogThrottle(LOG_EVERY_MS, now);
  }

  /** The cached value, null when absent, undefined when the KV could not be read. */
  async get(key: string): Promise<string | null | undefined> {
    try {
      return await this.kv.get(key);
    } catch (err) {
      this.failed(err);
      return undefined;
    }
  }

  /** Several cached values in one round trip; undefined when the KV could not be read. */
  async mget(keys: readonly string[]): Promise<Array<string | null> | undefined> {
    try {
      return await this.kv.mget(keys);
    } catch (err) {
      this.failed(err);
      return undefined;
    }
  }

  /**
   * get answered within the call, by a KV that can (the in-process one): no promise on the request path.
   * Undefined when the KV cannot, or failed (then get's rules apply: the database answers).
   */
  getNow(key: string): string | null | undefined {
    return this.runNow(readOne, key);
  }

  /**
   * mget answered within the call, by a KV that can (the in-process one): no promise on the request path.
   * Undefined when the KV cannot, or failed (then mget's rules apply: the database answers).
   */
  mgetNow(keys: readonly string[]): Array<string | null> | undefined {
    return this.runNow(readMany, keys);
  }

  private runNow<Args, Result>(operation: KvOperation<Args, Result>, args: Args): Result | undefined {
    if (!this.kv.runNow) return undefined;
    try {
      return this.kv.runNow(operation, args);
    } catch (err) {
      this.failed(err);
      return undefined;
    }
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    try {
      await this.kv.set(key, value, ttlMs);
    } catch (err) {
      this.failed(err);
    }
  }

  /**
   * Invalidation after a write: it must reach the KV, or other instances keep the stale entry, so a failure is
   * the caller's to know (the write itself is saved; repeating it repeats the invalidation).
   */
  async invalidate(key: string, what: string): Promise<void> {
    try {
      await this.kv.del(key);
    } catch (err) {
      this.failed(err);
      // Every such miss is logged, not only the first of a minute: each leaves an entry that may be stale elsewhere.
      this.logger?.warn({ err: (err as Error)?.message ?? String(err) }, `${what} is saved, but its cached copy could not be dropped from the KV`);
      throw new GatewayError('STORE_UNAVAILABLE', `${what} is saved, but the KV could not drop its cached copy: other instances may go on using the old one until it expires. Repeat the request once the KV answers.`);
    }
  }

  /** Best effort: an entry that outlives its truth is harmless here (expiry, say, is checked again on use). */
  async drop(key: string): Promise<void> {
    try {
      await this.kv.del(key);
    } catch (err) {
      this.failed(err);
    }
  }

  private failed(err: unknown): void {
    this.failures++;
    if (this.throttle.due() === null) return;
    this.logger?.warn({ err, failures: this.failures }, this.outage);
  }
}
