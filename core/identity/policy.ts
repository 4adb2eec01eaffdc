/**
 * Organization and department policies. Each level can only narrow what the level above allows: allow-lists
 * intersect, rate limits take the lower value, and an override may only remap to a model the lists allow.
 */
import type { JsonSchema } from '../json-schema.ts';

import type { EffectivePolicy, RateLimits } from '../pipeline/caller.ts';

export type { EffectivePolicy, RateLimits };

/** One level's policy, as stored on an organization or a department. */
export interface Policy {
  /** Model ids callers at this level may use; absent means every model the level above allows. */
  models?: string[];
  /** Requested model id -> the model id actually used. */
  modelOverrides?: Record<string, string>;
  rateLimits?: RateLimits;
}


export const UNRESTRICTED: EffectivePolicy = Object.freeze({ allowLists: [], overrides: [], rateLimits: {} });

const positiveInt: JsonSchema = { type: 'integer', minimum: 1 };
const modelId: JsonSchema = { type: 'string', minLength: 1, maxLength: 200 };

export const policySchema: JsonSchema = {
  type: 'object', additionalProperties: false,
  properties: {
    models: { type: 'array', items: modelId, uniqueItems: true, maxItems: 10000, description: 'Model allow-list; absent means no narrowing.' },
    modelOverrides: { type: 'object', additionalProperties: modelId, description: 'Requested model id -> model id used instead.' },
    rateLimits: {
      type: 'object', additionalProperties: false,
      properties: { requestsPerMinute: positiveInt, requestsPerDay: positiveInt, tokensPerDay: positiveInt },
    },
  },
};

const LIMIT_KEYS = ['requestsPerMinute', 'requestsPerDay', 'tokensPerDay'] as const;

/** Narrows `outer` by `inner`; `levels` are given outermost first (organization, then department). */
export function effectivePolicy(levels: ReadonlyArray<Policy | null | undefined>): EffectivePolicy {
  const present = levels.filter((p): p is Policy => Boolean(p));
  if (present.length === 0) return UNRESTRICTED;
  const rateLimits: RateLimits = {};
  for (const policy of present) {
    for (const key of LIMIT_KEYS) {
      const value = policy.rateLimits?.[key];
      if (value !== undefined) rateLimits[key] = Math.min(rateLimits[key] ?? value, value);
    }
  }
  return {
    allowLists: present.flatMap((p) => (p.models ? [new Set(p.models)] : [])),
    overrides: present.flatMap((p) => (p.modelOverrides && Object.keys(p.modelOverrides).length > 0 ? [p.modelOverrides] : [])).reverse(),
    rateLimits,
  };
}

/** The model id a request for `requested` is served with: the most specific override, else itself. */
export function overriddenModel(policy: EffectivePolicy, requested: string): string {
  for (const overrides of policy.overrides) {
    const target = overrides[requested];
    if (target !== undefined) return target;
  }
  return requested;
}

export function allowsModel(policy: EffectivePolicy, modelId: string): boolean {
  return policy.allowLists.every((list) => list.has(modelId));
}

/** Every requested id an override names, so the models list can show aliases that routing accepts. */
export function overrideSources(policy: EffectivePolicy): string[] {
  return [...new Set(policy.overrides.flatMap((o) => Object.keys(o)))];
}
