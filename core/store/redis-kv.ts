import { Redis } from 'ioredis';
import { bucketMs, type CounterAdd, type CountersOutcome, type KV, type WindowCheck, type WindowsAdmission, type WindowSettlement } from './kv.ts';
import { COUNTERS_ADD, INCR_WITH_TTL, WINDOWS_ADMIT, WINDOWS_SETTLE } from './redis-scripts.ts';

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
    // Without numberOfKeys the key count is the first argument: these scripts take a key or two per window or counter.
    redis.defineCommand('aigwWindowsAdmit', { lua: WINDOWS_ADMIT });
    redis.defineCommand('aigwWindowsSettle', { lua: WINDOWS_SETTLE });
    redis.defineCommand('aigwCountersAdd', { lua: COUNTERS_ADD });
    return new RedisKv(redis, prefix);
  }

  async get(key: string): Promise<string | null> {
    return this.redis.get(this.prefix + key);
  }

  async mget(keys: readonly string[]): Promise<Array<string | null>> {
    if (keys.length === 0) return [];
    return this.redis.mget(keys.map((key) => this.prefix + key));
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

  /** A script defined at open; ioredis sends EVALSHA and falls back to EVAL when Redis has lost the script. */
  private script(name: string): Script {
    const command = (this.redis as unknown as Record<string, Script>)[name]!;
    return (...args) => command.apply(this.redis, args);
  }

  async incrBy(key: string, by: number, ttlMs?: number): Promise<number> {
    return Number(await this.script('aigwIncrWithTtl')(this.prefix + key, by, ttlMs ?? 0));
  }

  /** A window is two keys: `<key>:buckets`, a hash of bucket start -> cost plus 'sum', and `<key>:starts`. */
  async windowsAdmit(windows: readonly WindowCheck[]): Promise<WindowsAdmission> {
    const keys = windows.flatMap((w) => [`${this.prefix}${w.key}:buckets`, `${this.prefix}${w.key}:starts`]);
    const args = windows.flatMap((w) => [w.cost, w.limit, w.windowMs, bucketMs(w.windowMs)]);
    const reply = ((await this.script('aigwWindowsAdmit')(keys.length, ...keys, ...args)) as Array<number | string>).map(Number);
    if (reply[0] === 0) return { admitted: false, refused: reply[1]!, used: reply[2]!, retryAfterMs: reply[3]!, resetMs: reply[4]! };
    return {
      admitted: true,
      windows: windows.map((_, i) => ({ used: reply[1 + 3 * i]!, resetMs: reply[2 + 3 * i]!, bucket: reply[3 + 3 * i]! })),
    };
  }

  async windowsSettle(settlements: readonly WindowSettlement[]): Promise<void> {
    if (settlements.length === 0) return;
    const keys = settlements.map((s) => `${this.prefix}${s.key}:buckets`);
    await this.script('aigwWindowsSettle')(keys.length, ...keys, ...settlements.flatMap((s) => [s.bucket, s.delta]));
  }

  async countersAdd(counters: readonly CounterAdd[]): Promise<CountersOutcome> {
    const keys = counters.map((c) => this.prefix + c.key);
    const args = counters.flatMap((c) => [c.amount, c.ceiling ?? '']);
    const reply = ((await this.script('aigwCountersAdd')(keys.length, ...keys, ...args)) as Array<number | string>).map(Number);
    if (reply[0] === 1) return { status: 'applied', values: reply.slice(1) };
    if (reply[0] === 2) return { status: 'missing', missing: reply.slice(1) };
    return { status: 'refused', index: reply[1]!, value: reply[2]! };
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
