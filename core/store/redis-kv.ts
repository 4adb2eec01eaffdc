import { Redis, ReplyError } from 'ioredis';
import { withTimeout } from '../timeout.ts';
import { StoreUnavailableError } from './deadline.ts';
import type { KV } from './kv.ts';
import type { KvOperation } from './kv-operation.ts';
import { INCR_WITH_TTL } from './redis-scripts.ts';

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

  /** Operation command names defined on this connection, with their scripts. */
  private readonly operations = new Map<string, string>();

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

  /** Defined on first use under its own command name; ioredis sends EVALSHA, EVAL when the script was lost. */
  async run<Args, Result>(operation: KvOperation<Args, Result>, args: Args): Promise<Result> {
    const command = `op:${operation.name}`;
    const known = this.operations.get(command);
    if (known === undefined) {
      this.redis.defineCommand(command, { lua: operation.redis.lua });
      this.operations.set(command, operation.redis.lua);
    } else if (known !== operation.redis.lua) {
      throw new Error(`two KV operations are named ${operation.name}`);
    }
    // Defined without numberOfKeys, so the key count is the first argument: an operation takes any number of keys.
    const keys = operation.redis.keys(args).map((key) => this.prefix + key);
    const reply = await this.script(command)(keys.length, ...keys, ...operation.redis.argv(args));
    return operation.redis.parse(reply, args);
  }

  async ping(): Promise<void> {
    await this.redis.ping().catch(unreachable);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
