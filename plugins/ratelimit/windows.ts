/**
 * Sliding windows of buckets, as two KV operations: admit a request to all of its windows, all or nothing in one
 * atomic step, on the KV's own clock (Redis TIME, so every instance shares one); and settle a reservation to the
 * real amount. The request is admitted when in each window the costs of the last `windowMs` plus its `cost`
 * stay within `limit`; otherwise nothing is added anywhere and the first window (in the order given) that
 * refused is reported. A key's `windowMs` must not change: it sets the bucket width.
 */
import { defineKvOperation } from '../../core/store/kv-operation.ts';
import { MemoryWindows } from './memory-windows.ts';
import { WINDOWS_ADD_ONCE, WINDOWS_ADMIT, WINDOWS_SETTLE } from './windows-lua.ts';

/**
 * Buckets per window. A window of W ms is counted in buckets of ceil(W / 1440) ms (a day: one minute; a minute:
 * 42 ms), so it holds at most 1,441 of them (the full ones and the current one), whatever the traffic. An entry
 * counts until its bucket has wholly left the window: up to one bucket longer than its exact expiry, never less.
 */
export const WINDOW_BUCKETS = 1440;

export const bucketMs = (windowMs: number): number => Math.max(1, Math.ceil(windowMs / WINDOW_BUCKETS));

export interface WindowCheck {
  key: string;
  cost: number;
  limit: number;
  windowMs: number;
}

export interface AdmittedWindow {
  /** The window's total after the call, this request included. */
  used: number;
  /** Ms until the window's oldest bucket leaves it. */
  resetMs: number;
  /** The start (ms on the KV's clock) of the bucket the request landed in: what windowsSettle takes. */
  bucket: number;
}

export type WindowsAdmission =
  | { admitted: true; windows: AdmittedWindow[] }
  | {
    admitted: false;
    /** The index of the first window that refused. */
    refused: number;
    /** Its total, without this request. */
    used: number;
    /** Ms until enough of it has passed for this cost to fit (its length when the cost never can). */
    retryAfterMs: number;
    /** Ms until its oldest bucket leaves it (0 when empty). */
    resetMs: number;
  };

export interface WindowSettlement {
  key: string;
  bucket: number;
  delta: number;
}

const memoryWindows = (kv: { now(): number; state<T extends object>(id: string, create: () => T): T }) =>
  kv.state('ratelimit.windows', () => new MemoryWindows(() => kv.now()));

/** A window is two Redis keys: `<key>:buckets`, a hash of bucket start -> cost plus 'sum', and `<key>:starts`. */
export const windowsAdmit = defineKvOperation<readonly WindowCheck[], WindowsAdmission>({
  name: 'ratelimit.windowsAdmit',
  redis: {
    lua: WINDOWS_ADMIT,
    keys: (windows) => windows.flatMap((w) => [`${w.key}:buckets`, `${w.key}:starts`]),
    argv: (windows) => windows.flatMap((w) => [w.cost, w.limit, w.windowMs, bucketMs(w.windowMs)]),
    parse: (raw, windows) => {
      const reply = (raw as Array<number | string>).map(Number);
      if (reply[0] === 0) return { admitted: false, refused: reply[1]!, used: reply[2]!, retryAfterMs: reply[3]!, resetMs: reply[4]! };
      return {
        admitted: true,
        windows: windows.map((_, i) => ({ used: reply[1 + 3 * i]!, resetMs: reply[2 + 3 * i]!, bucket: reply[3 + 3 * i]! })),
      };
    },
  },
  memory: (kv, windows) => memoryWindows(kv).admit(windows),
});

/**
 * Adds `delta` to the bucket an admission landed in (a reservation settled to the real amount; minus the cost
 * gives it back). A bucket that has left its window is not touched.
 */
export const windowsSettle = defineKvOperation<readonly WindowSettlement[], void>({
  name: 'ratelimit.windowsSettle',
  redis: {
    lua: WINDOWS_SETTLE,
    keys: (settlements) => settlements.map((s) => `${s.key}:buckets`),
    argv: (settlements) => settlements.flatMap((s) => [s.bucket, s.delta]),
    parse: () => undefined,
  },
  memory: (kv, settlements) => memoryWindows(kv).settle(settlements),
});

export interface WindowsAddOnceArgs {
  /** Set with the amounts, in the same step: while it lives, the same marker adds nothing again. */
  marker: string;
  markerTtlMs: number;
  adds: ReadonlyArray<{ key: string; windowMs: number; amount: number }>;
}

/**
 * Adds amounts already spent (metered work's tokens) to the current bucket of each window, exactly once per
 * marker, in one atomic step; no limit is checked. Returns whether it added (false: the marker was there).
 */
export const windowsAddOnce = defineKvOperation<WindowsAddOnceArgs, boolean>({
  name: 'ratelimit.windowsAddOnce',
  redis: {
    lua: WINDOWS_ADD_ONCE,
    keys: ({ marker, adds }) => [marker, ...adds.flatMap((a) => [`${a.key}:buckets`, `${a.key}:starts`])],
    argv: ({ markerTtlMs, adds }) => [markerTtlMs, ...adds.flatMap((a) => [a.amount, a.windowMs, bucketMs(a.windowMs)])],
    parse: (raw) => Number(raw) === 1,
  },
  memory: (kv, { marker, markerTtlMs, adds }) => {
    if (kv.get(marker) !== null) return false;
    kv.set(marker, '1', markerTtlMs);
    // Admission with no ceiling is exactly "add to the current bucket, dropping those that left".
    memoryWindows(kv).admit(adds.map((a) => ({ key: a.key, cost: a.amount, limit: Infinity, windowMs: a.windowMs })));
    return true;
  },
});

/** How many buckets a memory window holds (tests and diagnostics; Redis keeps them in a sorted set). */
export const memoryWindowSize = defineKvOperation<string, number>({
  name: 'ratelimit.windowSize',
  redis: { lua: "return redis.call('ZCARD', KEYS[1])", keys: (key) => [`${key}:starts`], argv: () => [], parse: (reply) => Number(reply) },
  memory: (kv, key) => memoryWindows(kv).size(key),
});
