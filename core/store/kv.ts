/**
 * Shared fast state: caches, counters, tickets, locks. In-process memory by default; Redis with REDIS_URL,
 * which is what makes limits and revocations hold across instances.
 */
export interface KV {
  readonly kind: 'memory' | 'redis';
  get(key: string): Promise<string | null>;
  /** With ttlMs the entry expires; without it, it lives until deleted. */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** Sets only when absent; returns whether it did (locks, single-use tickets). */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  del(key: string): Promise<void>;
  /** Adds `by` and returns the new value; the TTL is set when the key is created. */
  incrBy(key: string, by: number, ttlMs?: number): Promise<number>;
  /**
   * A sliding-window log, on the KV's own clock (Redis TIME, so every instance shares one): admits an entry `id`
   * of `cost` when the costs admitted in the last `windowMs` plus `cost` stay within `limit`, atomically.
   */
  windowAdmit(key: string, id: string, cost: number, limit: number, windowMs: number): Promise<WindowAdmission>;
  /** Sets an admitted entry's cost (a reservation settled to the real amount; 0 removes it). Gone entries stay gone. */
  windowAdjust(key: string, id: string, cost: number): Promise<void>;
  /**
   * Adds an integer `amount` (negative to give back) unless that would take the value above `ceiling`, atomically;
   * the TTL is set when the key is created. Returns whether it was added and the value after.
   */
  counterAdd(key: string, amount: number, ceiling: number | null, ttlMs?: number): Promise<{ applied: boolean; value: number }>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface WindowAdmission {
  admitted: boolean;
  /** The window's total after the call: with this entry when admitted, without it when refused. */
  used: number;
  /** Refused: ms until enough of the window has passed for this cost to fit (the window's length if it never can). */
  retryAfterMs: number;
  /** Ms until the window's oldest entry leaves it (0 when empty). */
  resetMs: number;
}

export interface KvOptions {
  redisUrl?: string;
  /** Prepended to every key, so that deployments (and test runs) sharing a Redis never collide. */
  prefix?: string;
}

export async function openKv(options: KvOptions): Promise<KV> {
  const prefix = options.prefix ?? 'aigw:';
  if (options.redisUrl) {
    const { RedisKv } = await import('./redis-kv.ts');
    return RedisKv.open(options.redisUrl, prefix);
  }
  const { MemoryKv } = await import('./memory-kv.ts');
  return new MemoryKv();
}
