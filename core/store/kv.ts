/**
 * Shared fast state: caches, counters, tickets, locks. In-process memory by default; Redis with REDIS_URL,
 * which is what makes limits and revocations hold across instances.
 */
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
  /**
   * Sliding windows of buckets, on the KV's own clock (Redis TIME, so every instance shares one), all or nothing
   * in one atomic step: the request is admitted to every window when in each one the costs of the last
   * `windowMs` plus its `cost` stay within `limit`; otherwise nothing is added anywhere and the first window (in
   * the order given) that refused is reported. A key's `windowMs` must not change: it sets the bucket width.
   */
  windowsAdmit(windows: readonly WindowCheck[]): Promise<WindowsAdmission>;
  /**
   * Adds `delta` to the bucket an admission landed in (a reservation settled to the real amount; minus the cost
   * gives it back). A bucket that has left its window is not touched.
   */
  windowsSettle(settlements: readonly WindowSettlement[]): Promise<void>;
  /**
   * Adds each integer `amount` to its counter, all or nothing, atomically. Nothing is added when a counter is
   * missing (counters are created by setIfAbsent, with their TTL) or when an amount >= 0 would take its counter
   * above its `ceiling`: then the first refusing counter is reported. A negative amount is never refused.
   */
  countersAdd(counters: readonly CounterAdd[]): Promise<CountersOutcome>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Buckets per window. A window of W ms is counted in buckets of ceil(W / 1440) ms (a day: one minute; a minute:
 * 42 ms), so it holds at most 1,441 of them (the full ones and the current one), whatever the traffic. An entry
 * counts until its bucket has wholly left the window: up to one bucket longer than its exact expiry, never less.
 */
export const WINDOW_BUCKETS = 1440;

export const bucketMs = (windowMs: number): number => Math.max(1, Math.ceil(windowMs / WINDOW_BUCKETS));

export interface WindowCheck {
  key: string;
  cost: number;
  limit: number;
  windowMs: number;
}

export interface AdmittedWindow {
  /** The window's total after the call, this request included. */
  used: number;
  /** Ms until the window's oldest bucket leaves it. */
  resetMs: number;
  /** The start (ms on the KV's clock) of the bucket the request landed in: what windowsSettle takes. */
  bucket: number;
}

export type WindowsAdmission =
  | { admitted: true; windows: AdmittedWindow[] }
  | {
    admitted: false;
    /** The index of the first window that refused. */
    refused: number;
    /** Its total, without this request. */
    used: number;
    /** Ms until enough of it has passed for this cost to fit (its length when the cost never can). */
    retryAfterMs: number;
    /** Ms until its oldest bucket leaves it (0 when empty). */
    resetMs: number;
  };

export interface WindowSettlement {
  key: string;
  bucket: number;
  delta: number;
}

export interface CounterAdd {
  key: string;
  amount: number;
  /** The most the counter may hold after an amount >= 0; null for none. */
  ceiling: number | null;
}

export type CountersOutcome =
  | { status: 'applied'; values: number[] }
  /** The indexes of the counters that do not exist: nothing was added. */
  | { status: 'missing'; missing: number[] }
  /** The first counter that refused and its value: nothing was added. */
  | { status: 'refused'; index: number; value: number };

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
