import type { KV } from './kv.ts';
import type { KvOperation, MemoryKvAccess, MemoryState } from './kv-operation.ts';

interface Entry {
  value: string;
  expiresAt: number; // 0 = never
}

const SWEEP_INTERVAL_MS = 30_000;

/** The single-instance KV. Expired entries vanish on read and in a periodic sweep. */
export class MemoryKv implements KV {
  readonly kind = 'memory' as const;
  private readonly entries = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly states = new Map<string, MemoryState>();

  constructor(private readonly now: () => number = Date.now) {
    this.sweeper = setInterval(() => this.sweep(), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt !== 0 && entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  async get(key: string): Promise<string | null> {
    return this.live(key)?.value ?? null;
  }

  async mget(keys: readonly string[]): Promise<Array<string | null>> {
    return keys.map((key) => this.live(key)?.value ?? null);
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    this.entries.set(key, { value, expiresAt: ttlMs ? this.now() + ttlMs : 0 });
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    if (this.live(key)) return false;
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    return true;
  }

  async del(key: string): Promise<void> {
    this.entries.delete(key);
  }

  async incrBy(key: string, by: number, ttlMs?: number): Promise<number> {
    const entry = this.live(key);
    if (!entry) {
      this.entries.set(key, { value: String(by), expiresAt: ttlMs ? this.now() + ttlMs : 0 });
      return by;
    }
    // Redis INCRBY accepts only a decimal integer; '' or '1e3' would be coerced by Number(), so check the text.
    if (!/^-?\d+$/.test(entry.value)) throw new Error(`value at ${key} is not an integer`);
    const next = Number(entry.value) + by;
    if (!Number.isSafeInteger(next)) throw new Error(`value at ${key} would leave the safe integer range`);
    entry.value = String(next);
    return next;
  }

  async run<Args, Result>(operation: KvOperation<Args, Result>, args: Args): Promise<Result> {
    return operation.memory(this.access, args);
  }

  runNow<Args, Result>(operation: KvOperation<Args, Result>, args: Args): Result {
    return operation.memory(this.access, args);
  }

  /** What operations see: the entries, and their own state kept per KV. */
  private readonly access: MemoryKvAccess = {
    now: () => this.now(),
    get: (key) => this.live(key)?.value ?? null,
    set: (key, value, ttlMs) => {
      const entry = this.live(key);
      // Counters and windows change in place on every request: no new entry, no map write, when the TTL stays.
      if (entry && !ttlMs) entry.value = value;
      else this.entries.set(key, { value, expiresAt: ttlMs ? this.now() + ttlMs : 0 });
    },
    del: (key) => {
      this.entries.delete(key);
    },
    state: <T extends object>(id: string, create: () => T & MemoryState): T => {
      let state = this.states.get(id);
      if (!state) this.states.set(id, (state = create()));
      return state as T;
    },
  };

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.entries.clear();
    for (const state of this.states.values()) state.clear?.();
    this.states.clear();
  }

  private sweep(): void {
    for (const state of this.states.values()) state.sweep?.();
    const now = this.now();
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt !== 0 && entry.expiresAt <= now) this.entries.delete(key);
    }
  }
}
