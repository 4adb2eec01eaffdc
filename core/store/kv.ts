/**
 * Shared fast state: caches, counters, tickets, locks. In-process memory by default; Redis with REDIS_URL,
 * which is what makes limits and revocations hold across instances.
 */
import type { KvOperation } from './kv-operation.ts';

export interface KV {
  readonly kind: 'memory' | 'redis';
  get(key: string): Promise<string | null>;
  /** Several keys in one round trip; null for each missing one, in the order asked. */
  mget(keys: readonly string[]): Promise<Array<string | null>>;
  /** With ttlMs the entry expires; without it, it lives until deleted. */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** Sets only when absent; returns whether it did (locks, single-use tickets). */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  del(key: string): Promise<void>;
  /** Adds `by` and returns the new value; the TTL is set when the key is created. */
  incrBy(key: string, by: number, ttlMs?: number): Promise<number>;
  /** A plugin's atomic operation (kv-operation.ts): its Lua script on Redis, its memory twin otherwise. */
  run<Args, Result>(operation: KvOperation<Args, Result>, args: Args): Promise<Result>;
  /**
   * The in-process KV only: runs the operation now and returns its result. Callers on the request path use it
   * when it is there, to spare a promise and a store timer per call (an in-process map cannot stall).
   */
  runNow?<Args, Result>(operation: KvOperation<Args, Result>, args: Args): Result;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface KvOptions {
  redisUrl?: string;
  /** Prepended to every key, so that deployments (and test runs) sharing a Redis never collide. */
  prefix?: string;
  /** storage.kvTimeoutMs: Redis's client-side timeouts are set from it (redis-kv.ts). */
  timeoutMs?: number;
}

/** The default of storage.kvTimeoutMs. */
export const DEFAULT_KV_TIMEOUT_MS = 500;

export async function openKv(options: KvOptions): Promise<KV> {
  const prefix = options.prefix ?? 'aigw:';
  if (options.redisUrl) {
    const { RedisKv } = await import('./redis-kv.ts');
    return RedisKv.open(options.redisUrl, { prefix, timeoutMs: options.timeoutMs ?? DEFAULT_KV_TIMEOUT_MS });
  }
  const { MemoryKv } = await import('./memory-kv.ts');
  return new MemoryKv();
}
