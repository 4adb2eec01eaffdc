import { Redis } from 'ioredis';
import type { KV, WindowAdmission } from './kv.ts';
import { COUNTER_ADD, INCR_WITH_TTL, WINDOW_ADJUST, WINDOW_ADMIT } from './redis-scripts.ts';

type Script = (...args: Array<string | number>) => Promise<unknown>;

export class RedisKv implements KV {
  readonly kind = 'redis' as const;

  private constructor(private readonly redis: Redis, private readonly prefix: string) {}

  static async open(url: string, prefix: string): Promise<RedisKv> {
    const redis = new Redis(url, {
      lazyConnect: true,
      // Fail fast while Redis is away instead of queueing requests without bound; ioredis reconnects by itself.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 5000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    });
    // Connection errors surface on the commands that fail and in /readyz; an unhandled 'error' event would crash.
    redis.on('error', () => {});
    await redis.connect();
    redis.defineCommand('aigwIncrWithTtl', { numberOfKeys: 1, lua: INCR_WITH_TTL });
    redis.defineCommand('aigwCounterAdd', { numberOfKeys: 1, lua: COUNTER_ADD });
    redis.defineCommand('aigwWindowAdmit', { numberOfKeys: 3, lua: WINDOW_ADMIT });
    redis.defineCommand('aigwWindowAdjust', { numberOfKeys: 3, lua: WINDOW_ADJUST });
    return new RedisKv(redis, prefix);
  }

  async get(key: string): Promise<string | null> {
    return this.redis.get(this.prefix + key);
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    if (ttlMs) await this.redis.set(this.prefix + key, value, 'PX', ttlMs);
    else await this.redis.set(this.prefix + key, value);
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.prefix + key, value, 'PX', ttlMs, 'NX')) === 'OK';
  }

  async del(key: string): Promise<void> {
    await this.redis.del(this.prefix + key);
  }

  private script(name: string): Script {
    const command = (this.redis as unknown as Record<string, Script>)[name]!;
    return (...args) => command.apply(this.redis, args);
  }

  /** A window's three keys share one hash tag, so the script's keys sit in one slot of a Redis Cluster too. */
  private windowKeys(key: string): [string, string, string] {
    const base = `${this.prefix}{${key}}`;
    return [`${base}:entries`, `${base}:costs`, `${base}:sum`];
  }

  async incrBy(key: string, by: number, ttlMs?: number): Promise<number> {
    return Number(await this.script('aigwIncrWithTtl')(this.prefix + key, by, ttlMs ?? 0));
  }

  async counterAdd(key: string, amount: number, ceiling: number | null, ttlMs?: number): Promise<{ applied: boolean; value: number }> {
    const [applied, value] = (await this.script('aigwCounterAdd')(this.prefix + key, amount, ceiling ?? '', ttlMs ?? 0)) as [number, number];
    return { applied: applied === 1, value: Number(value) };
  }

  async windowAdmit(key: string, id: string, cost: number, limit: number, windowMs: number): Promise<WindowAdmission> {
    const [admitted, used, retryAfterMs, resetMs] = (await this.script('aigwWindowAdmit')(...this.windowKeys(key), id, cost, limit, windowMs)) as number[];
    return { admitted: admitted === 1, used: Number(used), retryAfterMs: Number(retryAfterMs), resetMs: Number(resetMs) };
  }

  async windowAdjust(key: string, id: string, cost: number): Promise<void> {
    await this.script('aigwWindowAdjust')(...this.windowKeys(key), id, cost);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
