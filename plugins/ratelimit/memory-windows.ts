/**
 * The bucketed sliding windows of the memory KV: the same semantics as the Redis scripts (windows-lua.ts), in
 * one process. A window is its live buckets, oldest first, and their running sum; at most 1,441 buckets whatever
 * the traffic (see WINDOW_BUCKETS in windows.ts).
 */
import { bucketMs, type AdmittedWindow, type WindowCheck, type WindowsAdmission, type WindowSettlement } from './windows.ts';

interface Window {
  /** Bucket start times (ms), ascending, and what each holds. */
  starts: number[];
  costs: number[];
  sum: number;
  windowMs: number;
  width: number;
}

export class MemoryWindows {
  private readonly windows = new Map<string, Window>();

  constructor(private readonly now: () => number) {}

  admit(checks: readonly WindowCheck[]): WindowsAdmission {
    const now = this.now();
    // A request checks a handful of windows: the same key twice is found by a scan, without a Map per request.
    const windows: Window[] = [];
    for (let i = 0; i < checks.length; i++) {
      const earlier = sameKeyBefore(checks, i);
      windows.push(earlier === -1 ? this.current(checks[i]!, now) : windows[earlier]!);
    }
    // Every window is checked before any is added to, so that a refusal leaves them all as they were.
    for (let i = 0; i < checks.length; i++) {
      const { cost, limit } = checks[i]!;
      const window = windows[i]!;
      let used = window.sum;
      for (let j = 0; j < i; j++) if (windows[j] === window) used += checks[j]!.cost;
      if (used + cost > limit) {
        const retryAfterMs = cost > limit ? window.windowMs : retryAfter(window, used + cost - limit, now);
        return { admitted: false, refused: i, used, retryAfterMs, resetMs: resetMs(window, now) };
      }
    }
    return {
      admitted: true,
      windows: checks.map((check, i): AdmittedWindow => {
        const window = windows[i]!;
        this.windows.set(check.key, window);
        const bucket = now - (now % window.width);
        if (window.starts.at(-1) === bucket) window.costs[window.costs.length - 1]! += check.cost;
        else {
          window.starts.push(bucket);
          window.costs.push(check.cost);
        }
        window.sum += check.cost;
        return { used: window.sum, resetMs: resetMs(window, now), bucket };
      }),
    };
  }

  settle(settlements: readonly WindowSettlement[]): void {
    for (const { key, bucket, delta } of settlements) {
      const window = this.windows.get(key);
      const index = window ? findBucket(window.starts, bucket) : -1;
      if (!window || index === -1) continue;
      window.costs[index]! += delta;
      window.sum += delta;
    }
  }

  /** How many buckets a window holds (for tests and diagnostics). */
  size(key: string): number {
    return this.windows.get(key)?.starts.length ?? 0;
  }

  /** Drops windows whose every bucket has left them. */
  sweep(): void {
    const now = this.now();
    for (const [key, window] of this.windows) {
      const last = window.starts.at(-1);
      if (last === undefined || gone(window, last, now)) this.windows.delete(key);
    }
  }

  clear(): void {
    this.windows.clear();
  }

  /** The window at `now`: its expired buckets dropped (a new window when there is none). */
  private current(check: WindowCheck, now: number): Window {
    const window = this.windows.get(check.key) ?? { starts: [], costs: [], sum: 0, windowMs: check.windowMs, width: bucketMs(check.windowMs) };
    let expired = 0;
    while (expired < window.starts.length && gone(window, window.starts[expired]!, now)) window.sum -= window.costs[expired++]!;
    if (expired > 0) {
      window.starts.splice(0, expired);
      window.costs.splice(0, expired);
    }
    if (window.starts.length === 0) {
      window.sum = 0;
      this.windows.delete(check.key);
    }
    return window;
  }
}

/** The index of an earlier check of the same key, or -1. */
function sameKeyBefore(checks: readonly WindowCheck[], i: number): number {
  const key = checks[i]!.key;
  for (let j = 0; j < i; j++) if (checks[j]!.key === key) return j;
  return -1;
}

/** A bucket has left the window once all of it is older than the window: its last instant plus windowMs. */
const gone = (window: Window, start: number, now: number) => start + window.width + window.windowMs <= now;

const resetMs = (window: Window, now: number) => (window.starts.length === 0 ? 0 : window.starts[0]! + window.width + window.windowMs - now);

/** How long until the oldest buckets free `need` of the window. */
function retryAfter(window: Window, need: number, now: number): number {
  let freed = 0;
  for (let i = 0; i < window.starts.length; i++) {
    freed += window.costs[i]!;
    if (freed >= need) return Math.max(1, window.starts[i]! + window.width + window.windowMs - now);
  }
  return window.windowMs;
}

/** Binary search: settlements mostly name recent buckets, but any live one may be named. */
function findBucket(starts: readonly number[], bucket: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const start = starts[mid]!;
    if (start === bucket) return mid;
    if (start < bucket) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
