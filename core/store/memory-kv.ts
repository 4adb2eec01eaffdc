import type { CounterAdd, CountersOutcome, KV, WindowCheck, WindowsAdmission, WindowSettlement } from './kv.ts';
import { MemoryWindows } from './memory-window.ts';

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
  private readonly windows: MemoryWindows;

  constructor(private readonly now: () => number = Date.now) {
    this.windows = new MemoryWindows(now);
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

  async windowsAdmit(windows: readonly WindowCheck[]): Promise<WindowsAdmission> {
    return this.windows.admit(windows);
  }

  async windowsSettle(settlements: readonly WindowSettlement[]): Promise<void> {
    this.windows.settle(settlements);
  }

  /** How many buckets the window at `key` holds (for tests and diagnostics). */
  windowSize(key: string): number {
    return this.windows.size(key);
  }

  async countersAdd(counters: readonly CounterAdd[]): Promise<CountersOutcome> {
    // Every counter is read and checked before any is written, as the Redis script does.
    const entries = counters.map(({ key }) => this.live(key));
    const missing = entries.flatMap((entry, i) => (entry ? [] : [i]));
    if (missing.length > 0) return { status: 'missing', missing };
    const values = entries.map((entry, i) => {
      if (!/^-?\d+$/.test(entry!.value)) throw new Error(`value at ${counters[i]!.key} is not an integer`);
      return Number(entry!.value);
    });
    const pending = new Map<string, number>();
    for (let i = 0; i < counters.length; i++) {
      const { key, amount, ceiling } = counters[i]!;
      const value = values[i]! + (pending.get(key) ?? 0);
      if (ceiling !== null && amount >= 0 && value + amount > ceiling) return { status: 'refused', index: i, value };
      pending.set(key, (pending.get(key) ?? 0) + amount);
    }
    return {
      status: 'applied',
      values: counters.map(({ amount }, i) => {
        const entry = entries[i]!;
        entry.value = String(Number(entry.value) + amount);
        return Number(entry.value);
      }),
    };
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.entries.clear();
    this.windows.clear();
  }

  private sweep(): void {
    this.windows.sweep();
    const now = this.now();
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt !== 0 && entry.expiresAt <= now) this.entries.delete(key);
    }
  }
}
