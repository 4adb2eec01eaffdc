/**
 * Work metered outside a request (a realtime session at its close, a batch when it ends, the gateway's own
 * embeddings: core/pipeline/metered.ts) adds its tokens to the tokensPerDay windows of its caller, the apiKey
 * level (the key's own limits) and the tenant level (each entry's deployment limits narrowed by the caller's
 * policy), as a request of that caller would have been planned, without an address. It never refuses: the
 * tokens are spent. Each work is added once: a marker `ratelimit:metered:<work id>` set in the same atomic step
 * (windowsAddOnce), so a work reported twice, or by two instances at once, counts once.
 */
import type { MeteredWork } from '../../core/pipeline/metered.ts';
import type { PluginServices } from '../../core/pipeline/services.ts';
import type { StoreGuard } from '../../core/pipeline/store-guard.ts';
import { tokenCount } from '../../core/canonical/units.ts';
import { effectivePolicy, type Policy, type RateLimits } from '../../core/identity/policy.ts';
import { DAY_MS, type RateLimitConfig } from './config.ts';
import { planFor, type PlanCaller } from './plan.ts';
import { windowsAddOnce } from './windows.ts';

/** A marker outlives the day window it guards; work that ended longer ago than that is not added at all. */
const MARKER_TTL_MS = 2 * DAY_MS;

export const meteredMarker = (workId: string) => `ratelimit:metered:${workId}`;

/** What the plugin's entries registered at setup, for the hook (which gets no entry config). */
export interface RateLimitShared {
  entries: Array<{ config: RateLimitConfig; guard: StoreGuard }>;
}

export function workTokens(work: MeteredWork): number {
  const { usage } = work;
  const total = tokenCount(usage.total_tokens);
  return total > 0 ? total : tokenCount(usage.prompt_tokens) + tokenCount(usage.completion_tokens);
}

/** The caller as a request of it would carry it: the key's own limits (API keys only) and its policy's. */
async function meteredCaller(db: PluginServices['db'], work: MeteredWork): Promise<PlanCaller> {
  const keyId = work.callerKind === 'api_key' ? work.apiKeyId : null;
  const [key] = keyId ? await db.query<{ rate_limits: RateLimits | null }>('SELECT rate_limits FROM api_keys WHERE id = $1', [keyId]) : [];
  const policyOf = async (table: 'organizations' | 'departments', id: string | null): Promise<Policy | null> => {
    if (!id) return null;
    const [row] = await db.query<{ policy: Policy | null }>(`SELECT policy FROM ${table} WHERE id = $1`, [id]);
    return row?.policy ?? null;
  };
  const policy = effectivePolicy([await policyOf('organizations', work.organizationId), await policyOf('departments', work.departmentId)]);
  return {
    id: keyId ?? work.userId ?? '',
    tenantId: work.tenantId,
    rateLimits: key?.rate_limits ?? null,
    policy: { rateLimits: policy.rateLimits },
  };
}

export async function addMeteredWork(work: MeteredWork, services: PluginServices, shared: RateLimitShared): Promise<void> {
  const amount = workTokens(work);
  if (amount === 0 || shared.entries.length === 0) return;
  if (services.clock.now() - work.endedAt >= DAY_MS) return;
  const caller = await meteredCaller(services.db, work);
  // Entries of several pipelines plan the same window keys; each window is added to once.
  const adds = new Map<string, { key: string; windowMs: number; amount: number }>();
  for (const { config } of shared.entries) {
    for (const window of planFor(caller, undefined, config)) {
      if (window.name === 'tokensPerDay') adds.set(window.key, { key: window.key, windowMs: window.windowMs, amount });
    }
  }
  if (adds.size === 0) return;
  const args = { marker: meteredMarker(work.id), markerTtlMs: MARKER_TTL_MS, adds: [...adds.values()] };
  // Quiet, as a request's settlement is: a KV that fails loses this work's count, it does not hold back the others.
  await shared.entries[0]!.guard.quiet('windowsAddOnce', () => services.kv.run(windowsAddOnce, args));
}
