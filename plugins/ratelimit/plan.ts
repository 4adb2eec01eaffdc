/**
 * Which windows a request is checked against, in the order they are checked: ip, then the API key's own
 * limits, then the deployment's (per tenant, narrowed by the caller's policy). Within a level: per minute,
 * per day, tokens per day. Building the plan touches no store, so a request with no limit costs nothing.
 */
import type { RateLimits } from '../../core/identity/policy.ts';
import { LIMIT_NAMES, WINDOW_MS, type Level, type LimitName, type RateLimitConfig } from './config.ts';

export interface PlannedWindow {
  level: Level;
  name: LimitName;
  /** `ratelimit:<level>:<id>:<limit-name>` */
  key: string;
  limit: number;
  windowMs: number;
}

const NONE: readonly PlannedWindow[] = [];

/** What planning needs of a caller: a live request's gw.caller, or one rebuilt for metered work (metered.ts). */
export interface PlanCaller {
  id: string;
  tenantId: string;
  rateLimits: RateLimits | null;
  policy: { rateLimits: RateLimits };
}

interface CachedPlan {
  tenantId: string;
  keyLimits: RateLimits | null;
  policyLimits: RateLimits;
  clientIp: string | undefined;
  plan: readonly PlannedWindow[];
}

/** Callers whose plans one pipeline entry keeps; past it the cache starts over. */
const CACHED_CALLERS = 10_000;

/**
 * The last plan of each recent caller, per pipeline entry. A key's requests carry the same limit objects (its
 * cached record and its policy) and mostly come from one address: their plan, with its window keys, is made once
 * instead of per request (five objects and five key strings, hashed again by every lookup). A plan is used again
 * only while the caller's limits are the very objects it was made from and the address is the same.
 */
export class PlanCache {
  private readonly plans = new Map<string, CachedPlan>();

  constructor(private readonly config: Pick<RateLimitConfig, 'deployment' | 'ip'>, private readonly capacity = CACHED_CALLERS) {}

  plan(gw: { caller?: PlanCaller | undefined; clientIp?: string | undefined }): readonly PlannedWindow[] {
    const { caller, clientIp } = gw;
    if (!caller) return planFor(caller, clientIp, this.config);
    const cached = this.plans.get(caller.id);
    if (cached && cached.tenantId === caller.tenantId && cached.keyLimits === caller.rateLimits
      && cached.policyLimits === caller.policy.rateLimits && cached.clientIp === clientIp) return cached.plan;
    const plan = planFor(caller, clientIp, this.config);
    if (!cached && this.plans.size >= this.capacity) this.plans.clear();
    this.plans.set(caller.id, { tenantId: caller.tenantId, keyLimits: caller.rateLimits, policyLimits: caller.policy.rateLimits, clientIp, plan });
    return plan;
  }
}

/** The windows of a caller (and of an address, when there is one: metered work has none). */
export function planFor(caller: PlanCaller | undefined, clientIp: string | undefined, config: Pick<RateLimitConfig, 'deployment' | 'ip'>): readonly PlannedWindow[] {
  const keyLimits = caller?.rateLimits ?? null;
  const policyLimits = caller?.policy.rateLimits;
  const ipLimits = clientIp === undefined ? undefined : config.ip;
  // The common case, decided without allocating: nothing limits this request.
  if (!any(ipLimits) && (!caller || (!any(keyLimits) && !any(config.deployment) && !any(policyLimits)))) return NONE;
  const planned: PlannedWindow[] = [];
  if (clientIp !== undefined) add(planned, 'ip', clientIp, config.ip);
  // Without a caller (the plugin listed before auth) only the address can be limited.
  if (!caller) return planned;
  if (keyLimits) add(planned, 'apiKey', caller.id, keyLimits);
  add(planned, 'tenant', caller.tenantId, narrowed(config.deployment, caller.policy.rateLimits));
  return planned;
}

function any(limits: RateLimits | null | undefined): boolean {
  return !!limits && (limits.requestsPerMinute !== undefined || limits.requestsPerDay !== undefined || limits.tokensPerDay !== undefined);
}

function add(planned: PlannedWindow[], level: Level, id: string, limits: RateLimits): void {
  for (const name of LIMIT_NAMES) {
    const limit = limits[name];
    if (limit !== undefined) planned.push({ level, name, key: `ratelimit:${level}:${id}:${name}`, limit, windowMs: WINDOW_MS[name] });
  }
}

/** Each limit at the lower of the deployment's and the policy's; either alone applies when the other is unset. */
export function narrowed(deployment: RateLimits, policy: RateLimits): RateLimits {
  const result: RateLimits = {};
  for (const name of LIMIT_NAMES) {
    const a = deployment[name];
    const b = policy[name];
    const value = a === undefined ? b : b === undefined ? a : Math.min(a, b);
    if (value !== undefined) result[name] = value;
  }
  return result;
}
