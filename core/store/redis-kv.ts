import { Redis, ReplyError } from 'ioredis';
import { withTimeout } from '../timeout.ts';
import { StoreUnavailableError } from './deadline.ts';
import { bucketMs, type CounterAdd, type CountersOutcome, type KV, type WindowCheck, type WindowsAdmission, type WindowSettlement } from './kv.ts';
import { COUNTERS_ADD, INCR_WITH_TTL, WINDOWS_ADMIT, WINDOWS_SETTLE } from './redis-scripts.ts';

type Script = (...args: Array<string | number>) => Promise<unknown>;

/**
 * How long past the gateway's own deadline (storage.kvTimeoutMs) ioredis still waits for an answer. A caller has
 * given up by then, but a late answer lets it undo what the command did (a reservation given back); past this
 * window ioredis drops the command, which bounds what a long freeze holds in memory.
 */
const LATE_ANSWER_MS = 10_000;

export interface RedisKvOptions {
  prefix: string;
  /** storage.kvTimeoutMs: the deadline the gateway applies to each call (core/store/bounded.ts). */
  timeoutMs: number;
}

const CONNECT_TIMEOUT_MS = 5000;

/**
 * Connected and answering. connectTimeout covers the TCP connection only: a frozen Redis accepts it (the kernel
 * does) and never answers the ready check, which would hold the start for as long as the freeze lasts.
 */
async function ready(redis: Redis): Promise<void> {
  try {
    await withTimeout(redis.connect(), CONNECT_TIMEOUT_MS, `Redis did not answer within ${CONNECT_TIMEOUT_MS} ms of connecting`);
  } catch (err) {
    redis.disconnect();
    throw err;
  }
}

/** Redis's own refusals (a script's error) are answers; anything else means Redis was not reached. */
function unreachable(err: unknown): never {
  if (err instanceof ReplyError) throw err;
  const failure = new StoreUnavailableError('kv', 'The KV could not be reached');
  throw Object.assign(failure, { cause: err });
}

export class RedisKv implements KV {
  readonly kind = 'redis' as const;

  private constructor(private readonly redis: Redis, private readonly prefix: string) {}

  static async open(url: string, { prefix, timeoutMs }: RedisKvOptions): Promise<RedisKv> {
    const redis = new Redis(url, {
      lazyConnect: true,
      // While disconnected, a command fails at once instead of waiting in a queue for a Redis that may be gone
      // for minutes; ioredis reconnects by itself (retryStrategy) and the next request uses the new connection.
      enableOfflineQueue: false,
      // A command in flight when the connection drops fails then (0: no reconnection is waited for) and is never
      // sent again: Redis may have run it already, and a reservation run twice would count twice.
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      // A connected Redis that stops answering (frozen, overloaded) keeps its socket: only a timeout ends the wait.
      // The gateway's deadline fires first; this one frees the command.
      commandTimeout: timeoutMs + LATE_ANSWER_MS,
      connectTimeout: CONNECT_TIMEOUT_MS,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    });
    // Connection errors surface on the commands that fail and in /readyz; an unhandled 'error' event would crash.
    redis.on('error', () => {});
    await ready(redis);
    redis.defineCommand('aigwIncrWithTtl', { numberOfKeys: 1, lua: INCR_WITH_TTL });
    // Without numberOfKeys the key count is the first argument: these scripts take a key or two per window or counter.
    redis.defineCommand('aigwWindowsAdmit', { lua: WINDOWS_ADMIT });
    redis.defineCommand('aigwWindowsSettle', { lua: WINDOWS_SETTLE });
    redis.defineCommand('aigwCountersAdd', { lua: COUNTERS_ADD });
    return new RedisKv(redis, prefix);
  }

  async get(key: string): Promise<string | null> {
    return this.redis.get(this.prefix + key).catch(unreachable);
  }

  async mget(keys: readonly string[]): Promise<Array<string | null>> {
    if (keys.length === 0) return [];
    return this.redis.mget(keys.map((key) => this.prefix + key)).catch(unreachable);
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    if (ttlMs) await this.redis.set(this.prefix + key, value, 'PX', ttlMs).catch(unreachable);
    else await this.redis.set(this.prefix + key, value).catch(unreachable);
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.prefix + key, value, 'PX', ttlMs, 'NX').catch(unreachable)) === 'OK';
  }

  async del(key: string): Promise<void> {
    await this.redis.del(this.prefix + key).catch(unreachable);
  }

  /** A script defined at open; ioredis sends EVALSHA and falls back to EVAL when Redis has lost the script. */
  private script(name: string): Script {
    const command = (this.redis as unknown as Record<string, Script>)[name]!;
    return (...args) => command.apply(this.redis, args).catch(unreachable);
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
    await this.redis.ping().catch(unreachable);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
