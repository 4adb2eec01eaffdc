/**
 * KV operations a plugin brings: one atomic step on the shared KV, written twice, once as a Redis Lua script and
 * once for the in-process memory KV, with the same semantics. The core runs either under the KV's deadline and
 * key prefix; it knows nothing of what an operation means (ratelimit's windows, budget's counters are two).
 */

/** What a memory operation may touch: the memory KV's entries, and state of its own kept beside them. */
export interface MemoryKvAccess {
  /** The memory KV's clock (ms). */
  now(): number;
  get(key: string): string | null;
  /** With ttlMs the entry expires; without it, it keeps the TTL it had (none for a new entry). */
  set(key: string, value: string, ttlMs?: number): void;
  del(key: string): void;
  /**
   * State an operation family keeps in memory instead of entries (a structure Redis would hold as hashes or
   * sorted sets). Created once per KV by `create`; its `sweep()` runs with the KV's expiry sweep, `clear()` at close.
   */
  state<T extends object>(id: string, create: () => T & MemoryState): T;
}

export interface MemoryState {
  sweep?(): void;
  clear?(): void;
}

export interface KvOperation<Args, Result> {
  /** Unique across plugins: `<plugin>.<operation>`, e.g. `ratelimit.windowsAdmit`. */
  readonly name: string;
  readonly redis: {
    /** Runs atomically on the Redis server; keys come prefixed, in KEYS, and arguments in ARGV. */
    readonly lua: string;
    keys(args: Args): string[];
    argv(args: Args): Array<string | number>;
    /** The script's reply, turned into the result. */
    parse(reply: unknown, args: Args): Result;
  };
  /** The same step on the memory KV: synchronous, so nothing interleaves with it. */
  memory(kv: MemoryKvAccess, args: Args): Result;
}

const NAME = /^[a-z][a-z0-9-]*\.[a-zA-Z][a-zA-Z0-9]*$/;

/** Checks an operation once, when its module loads, rather than on the first request that runs it. */
export function defineKvOperation<Args, Result>(operation: KvOperation<Args, Result>): KvOperation<Args, Result> {
  if (!NAME.test(operation.name)) throw new Error(`KV operation name ${JSON.stringify(operation.name)} must look like "plugin.operation" (${NAME})`);
  if (typeof operation.redis?.lua !== 'string' || operation.redis.lua.trim() === '') throw new Error(`KV operation ${operation.name}: redis.lua is required`);
  for (const fn of ['keys', 'argv', 'parse'] as const) {
    if (typeof operation.redis[fn] !== 'function') throw new Error(`KV operation ${operation.name}: redis.${fn} must be a function`);
  }
  if (typeof operation.memory !== 'function') throw new Error(`KV operation ${operation.name}: memory must be a function`);
  return operation;
}
