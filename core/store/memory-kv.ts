import type { KV, WindowAdmission } from './kv.ts';
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

  async windowAdmit(key: string, id: string, cost: number, limit: number, windowMs: number): Promise<WindowAdmission> {
    return this.windows.admit(key, id, cost, limit, windowMs);
  }

  async windowAdjust(key: string, id: string, cost: number): Promise<void> {
    this.windows.adjust(key, id, cost);
  }

  async counterAdd(key: string, amount: number, ceiling: number | null, ttlMs?: number): Promise<{ applied: boolean; value: number }> {
    const entry = this.live(key);
    if (entry && !/^-?\d+$/.test(entry.value)) throw new Error(`value at ${key} is not an integer`);
    const value = entry ? Number(entry.value) : 0;
    if (ceiling !== null && amount > 0 && value + amount > ceiling) return { applied: false, value };
    const next = value + amount;
    if (entry) entry.value = String(next);
    else this.entries.set(key, { value: String(next), expiresAt: ttlMs ? this.now() + ttlMs : 0 });
    return { applied: true, value: next };
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
