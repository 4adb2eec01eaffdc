/**
 * Admission: every window of the request in one atomic KV call (windowsAdmit, on the KV's clock), all or
 * nothing: when any window refuses, nothing is added anywhere, so a refused request consumes no quota, and the
 * first refusing window in plan order answers. Settlement is one call too (windowsSettle).
 */
import { GatewayError } from '../../core/errors.ts';
import type { PluginKv } from '../../core/pipeline/services.ts';
import { windowsAdmit, windowsSettle, type WindowsAdmission } from './windows.ts';
import type { PlannedWindow } from './plan.ts';
import type { StoreGuard } from '../../core/pipeline/store-guard.ts';
import { lateOutcome } from '../../core/store/deadline.ts';
import { TokenReservation } from './tokens.ts';

interface CostedWindow extends PlannedWindow {
  cost: number;
}

export interface AdmittedWindow extends CostedWindow {
  /** The window's total with this request. */
  used: number;
  resetMs: number;
  /** The bucket the request landed in, which settlement adjusts. */
  bucket: number;
}

export interface Admission {
  admitted: AdmittedWindow[];
  /** The KV failed and onStoreError is open: the request goes on unchecked. */
  storeFailed: boolean;
}

/**
 * Admits every window of the request. On the in-process KV, with the body read and the tokenizer loaded (or no
 * token window), the admission comes within the call: no promise.
 */
export function admitAll(kv: PluginKv, guard: StoreGuard, planned: readonly PlannedWindow[], tokens: TokenReservation, closed: boolean): Admission | Promise<Admission> {
  // A token window's cost is the estimate, so the body is read before the call: a 400 or 413 from it ends the
  // request with nothing consumed. Endpoints without a canonical body are counted by their request limits only.
  if (tokens.applies && planned.some((window) => window.name === 'tokensPerDay')) {
    const wanted = tokens.wantNow();
    if (wanted === undefined) return tokens.want().then((later) => admitWindows(kv, guard, costedWindows(planned, tokens, later), closed));
    return admitWindows(kv, guard, costedWindows(planned, tokens, wanted), closed);
  }
  return admitWindows(kv, guard, costedWindows(planned, tokens, 0), closed);
}

function costedWindows(planned: readonly PlannedWindow[], tokens: TokenReservation, wanted: number): CostedWindow[] {
  const windows: CostedWindow[] = [];
  for (const window of planned) {
    if (window.name !== 'tokensPerDay') windows.push(costed(window, 1));
    else if (tokens.applies) {
      tokens.refuseIfNeverFits(window, wanted);
      windows.push(costed(window, TokenReservation.cost(wanted, tokens.prompt, window.limit)));
    }
  }
  return windows;
}

function admitWindows(kv: PluginKv, guard: StoreGuard, windows: CostedWindow[], closed: boolean): Admission | Promise<Admission> {
  if (windows.length === 0) return { admitted: [], storeFailed: false };
  // The in-process KV answers within the call: no promise, no timer, nothing late to give back.
  if (kv.runNow) {
    let result: WindowsAdmission;
    try {
      result = guard.run('windowsAdmit', () => kv.runNow!(windowsAdmit, windows)) as WindowsAdmission;
    } catch {
      if (!closed) return { admitted: [], storeFailed: true };
      throw storeUnavailable();
    }
    return admission(windows, result);
  }
  return admitRemote(kv, guard, windows, closed);
}

async function admitRemote(kv: PluginKv, guard: StoreGuard, windows: CostedWindow[], closed: boolean): Promise<Admission> {
  const admitting = kv.run(windowsAdmit, windows);
  let result: WindowsAdmission;
  try {
    result = await guard.run('windowsAdmit', () => admitting);
  } catch {
    if (!closed) return { admitted: [], storeFailed: true };
    // A call that timed out may still complete (at the store's deadline or the guard's): what it admitted is then
    // given back.
    void lateOutcome(admitting).then((late) => (late?.admitted ? settleAll(kv, guard, admittedWindows(windows, late), 0) : undefined));
    throw storeUnavailable();
  }
  return admission(windows, result);
}

const storeUnavailable = () =>
  new GatewayError('STORE_UNAVAILABLE', 'Rate limiting is unavailable: the shared store did not answer', { plugin: 'ratelimit' }, { 'Retry-After': '1' });

function admission(windows: readonly CostedWindow[], result: WindowsAdmission): Admission {
  if (!result.admitted) {
    const window = windows[result.refused]!;
    throw refusal(window, result.used, result.retryAfterMs, result.resetMs);
  }
  return { admitted: admittedWindows(windows, result), storeFailed: false };
}

// Written out rather than spread: objects of one shape, made on every request.
const costed = (w: PlannedWindow, cost: number): CostedWindow => ({ level: w.level, name: w.name, key: w.key, limit: w.limit, windowMs: w.windowMs, cost });

function admittedWindows(windows: readonly CostedWindow[], result: Extract<WindowsAdmission, { admitted: true }>): AdmittedWindow[] {
  return windows.map((w, i) => {
    const { used, resetMs, bucket } = result.windows[i]!;
    return { level: w.level, name: w.name, key: w.key, limit: w.limit, windowMs: w.windowMs, cost: w.cost, used, resetMs, bucket };
  });
}

/**
 * Sets what each of `windows` charged this request to `used` (0 gives it back): one KV call, never thrown; done
 * when this returns on the in-process KV.
 */
export function settleAll(kv: PluginKv, guard: StoreGuard, windows: readonly AdmittedWindow[], used: number): void | Promise<void> {
  const changed = windows.filter((w) => w.cost !== used);
  if (changed.length === 0) return;
  const settlements = changed.map((w) => ({ key: w.key, bucket: w.bucket, delta: used - w.cost }));
  return guard.quiet('windowsSettle', () => (kv.runNow ? kv.runNow(windowsSettle, settlements) : kv.run(windowsSettle, settlements)));
}

const seconds = (ms: number) => Math.ceil(ms / 1000);

/** X-RateLimit-* for one window: its limit, what is left, and seconds until its oldest bucket leaves it. */
function windowHeaders(window: { limit: number; used: number; resetMs: number }): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(window.limit),
    'X-RateLimit-Remaining': String(Math.max(0, window.limit - window.used)),
    'X-RateLimit-Reset': String(seconds(window.resetMs)),
  };
}

/**
 * The same headers on an admitted request's response, one ctx.set each: Koa's set given an object walks it with
 * for...in, a property access that sees every header object the gateway passes it (megamorphic under load).
 */
export function setWindowHeaders(ctx: { set(name: string, value: string): void }, window: { limit: number; used: number; resetMs: number }): void {
  ctx.set('X-RateLimit-Limit', String(window.limit));
  ctx.set('X-RateLimit-Remaining', String(Math.max(0, window.limit - window.used)));
  ctx.set('X-RateLimit-Reset', String(seconds(window.resetMs)));
}

/** The most constraining admitted window: the smallest share of its limit left; the earlier one on a tie. */
export function mostConstraining(admitted: readonly AdmittedWindow[]): AdmittedWindow | undefined {
  let best: AdmittedWindow | undefined;
  let bestShare = Infinity;
  for (const window of admitted) {
    const share = (window.limit - window.used) / window.limit;
    if (share < bestShare) {
      best = window;
      bestShare = share;
    }
  }
  return best;
}

function refusal(window: CostedWindow, used: number, retryAfterMs: number, resetMs: number): GatewayError {
  const retryAfter = Math.max(1, seconds(retryAfterMs));
  return new GatewayError(
    'RATE_LIMIT_EXCEEDED',
    'Rate limit exceeded',
    { level: window.level, retryAfter, limit: window.limit, windowMs: window.windowMs },
    { 'Retry-After': String(retryAfter), ...windowHeaders({ limit: window.limit, used, resetMs }) },
  );
}
