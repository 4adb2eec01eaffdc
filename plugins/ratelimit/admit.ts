/**
 * Admission: each planned window in order, one atomic KV call each (windowAdmit runs on the KV's clock). A
 * refusal, or a failure reading the body for a token estimate, gives back what the earlier windows admitted,
 * so a refused request consumes no quota anywhere.
 */
import { GatewayError } from '../../core/errors.ts';
import type { KV, WindowAdmission } from '../../core/store/kv.ts';
import type { PlannedWindow } from './plan.ts';
import type { StoreGuard } from './store-guard.ts';
import { TokenReservation } from './tokens.ts';

export interface AdmittedWindow extends PlannedWindow {
  cost: number;
  admission: WindowAdmission;
}

export interface Admission {
  admitted: AdmittedWindow[];
  /** The KV failed and onStoreError is open: the request goes on, checked only against what was admitted. */
  storeFailed: boolean;
}

export async function admitAll(
  kv: KV,
  guard: StoreGuard,
  planned: readonly PlannedWindow[],
  entryId: string,
  tokens: TokenReservation,
  closed: boolean,
): Promise<Admission> {
  const admitted: AdmittedWindow[] = [];
  const giveBack = () => Promise.all(admitted.map((w) => guard.quiet('windowAdjust', () => kv.windowAdjust(w.key, entryId, 0))));
  for (const window of planned) {
    let cost = 1;
    if (window.name === 'tokensPerDay') {
      if (!tokens.applies) continue;
      try {
        cost = TokenReservation.cost(await tokens.want(), tokens.prompt, window.limit);
      } catch (err) {
        await giveBack();
        throw err;
      }
    }
    let admission: WindowAdmission;
    try {
      admission = await guard.run('windowAdmit', () => kv.windowAdmit(window.key, entryId, cost, window.limit, window.windowMs));
    } catch {
      if (!closed) return { admitted, storeFailed: true };
      await giveBack();
      throw new GatewayError('STORE_UNAVAILABLE', 'Rate limiting is unavailable: the shared store did not answer', { plugin: 'ratelimit' }, { 'Retry-After': '1' });
    }
    if (!admission.admitted) {
      await giveBack();
      throw refusal({ ...window, cost, admission });
    }
    admitted.push({ ...window, cost, admission });
  }
  return { admitted, storeFailed: false };
}

const seconds = (ms: number) => Math.ceil(ms / 1000);

/** X-RateLimit-* for one window: its limit, what is left, and seconds until its oldest entry leaves it. */
export function windowHeaders(window: AdmittedWindow): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(window.limit),
    'X-RateLimit-Remaining': String(Math.max(0, window.limit - window.admission.used)),
    'X-RateLimit-Reset': String(seconds(window.admission.resetMs)),
  };
}

/** The most constraining admitted window: the smallest share of its limit left; the earlier one on a tie. */
export function mostConstraining(admitted: readonly AdmittedWindow[]): AdmittedWindow | undefined {
  let best: AdmittedWindow | undefined;
  let bestShare = Infinity;
  for (const window of admitted) {
    const share = (window.limit - window.admission.used) / window.limit;
    if (share < bestShare) {
      best = window;
      bestShare = share;
    }
  }
  return best;
}

function refusal(window: AdmittedWindow): GatewayError {
  const retryAfter = Math.max(1, seconds(window.admission.retryAfterMs));
  return new GatewayError(
    'RATE_LIMIT_EXCEEDED',
    'Rate limit exceeded',
    { level: window.level, retryAfter, limit: window.limit, windowMs: window.windowMs },
    { 'Retry-After': String(retryAfter), ...windowHeaders(window) },
  );
}
