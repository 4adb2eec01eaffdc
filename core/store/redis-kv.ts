import { Redis } from 'ioredis';
import type { KV } from './kv.ts';

// INCRBY and the first-time PEXPIRE in one step, so a key can never be left without its TTL.
const INCR_WITH_TTL = `
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
if tonumber(ARGV[2]) > 0 and redis.call('PTTL', KEYS[1]) == -1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return v`;

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

  async incrBy(key: string, by: number, ttlMs?: number): Promise<number> {
    const command = (this.redis as unknown as Record<string, (...args: unknown[]) => Promise<number>>).aigwIncrWithTtl!;
    return Number(await command.call(this.redis, this.prefix + key, by, ttlMs ?? 0));
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
