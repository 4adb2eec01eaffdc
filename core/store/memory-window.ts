/** The sliding-window log of the memory KV: the same semantics as the Redis script, in one process. */
import type { WindowAdmission } from './kv.ts';

interface Entry {
  id: string;
  at: number;
  cost: number;
}

export class MemoryWindows {
  private readonly windows = new Map<string, { entries: Entry[]; sum: number; windowMs: number }>();

  constructor(private readonly now: () => number) {}

  admit(key: string, id: string, cost: number, limit: number, windowMs: number): WindowAdmission {
    const now = this.now();
    const window = this.windows.get(key) ?? { entries: [], sum: 0, windowMs };
    window.windowMs = windowMs;
    const cutoff = now - windowMs;
    // Entries are in admission order, so the expired ones are a prefix.
    let gone = 0;
    while (gone < window.entries.length && window.entries[gone]!.at <= cutoff) window.sum -= window.entries[gone++]!.cost;
    if (gone > 0) window.entries.splice(0, gone);
    this.windows.set(key, window);
    const reset = () => (window.entries.length === 0 ? 0 : window.entries[0]!.at + windowMs - now);
    if (window.sum + cost > limit) {
      return { admitted: false, used: window.sum, retryAfterMs: retryAfter(window.entries, window.sum + cost - limit, cost > limit, now, windowMs), resetMs: reset() };
    }
    window.entries.push({ id, at: now, cost });
    window.sum += cost;
    return { admitted: true, used: window.sum, retryAfterMs: 0, resetMs: reset() };
  }

  adjust(key: string, id: string, cost: number): void {
    const window = this.windows.get(key);
    const index = window?.entries.findIndex((e) => e.id === id) ?? -1;
    if (!window || index === -1) return;
    const entry = window.entries[index]!;
    window.sum += cost - entry.cost;
    if (cost <= 0) window.entries.splice(index, 1);
    else entry.cost = cost;
  }

  /** Drops windows whose every entry has left them. */
  sweep(): void {
    const now = this.now();
    for (const [key, window] of this.windows) {
      const last = window.entries.at(-1);
      if (!last || last.at <= now - window.windowMs) this.windows.delete(key);
    }
  }

  clear(): void {
    this.windows.clear();
  }
}

/** How long until the oldest entries free `need` of the window (the whole window when the cost can never fit). */
export function retryAfter(entries: ReadonlyArray<{ at: number; cost: number }>, need: number, never: boolean, now: number, windowMs: number): number {
  if (never) return windowMs;
  let freed = 0;
  for (const entry of entries) {
    freed += entry.cost;
    if (freed >= need) return Math.max(1, entry.at + windowMs - now);
  }
  return windowMs;
}
