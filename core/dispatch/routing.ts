/** Model id -> ordered provider targets, from the `models` section. */
import type { GatewayConfig, ModelConfig } from '../config/types.ts';
import { GatewayError } from '../errors.ts';
import { allowsModel, overriddenModel, overrideSources, UNRESTRICTED, type EffectivePolicy } from '../identity/policy.ts';
import { fillBaseUrl } from './base-url.ts';
import type { ProviderTarget } from './provider.ts';

export interface ModelRoute {
  model: ModelConfig;
  strategy: ModelConfig['strategy'];
  targets: Array<ProviderTarget & { weight: number }>;
}

export class RoutingTable {
  private readonly routes = new Map<string, ModelRoute>();

  constructor(config: GatewayConfig, defaultBaseUrl: (slug: string) => string | undefined) {
    for (const model of config.models) {
      if (!model.enabled) continue;
      const declared = model.targets ?? [{ provider: model.provider!, upstreamModel: model.upstreamModel }];
      const targets = declared.flatMap((t) => {
        const provider = config.providers[t.provider];
        if (!provider || !provider.enabled) return [];
        const baseUrl = provider.baseUrl ?? fillBaseUrl(defaultBaseUrl(t.provider), provider.options);
        if (!baseUrl) return [];
        const target: ProviderTarget & { weight: number } = {
          slug: t.provider,
          baseUrl,
          headers: provider.headers ?? {},
          options: provider.options ?? {},
          upstreamModel: t.upstreamModel ?? model.upstreamModel ?? model.id,
          weight: 'weight' in t && t.weight !== undefined ? t.weight : 1,
        };
        if (provider.apiKey) target.apiKey = provider.apiKey;
        return [target];
      });
      if (targets.length > 0) this.routes.set(model.id, { model, strategy: model.strategy, targets });
    }
  }

  /**
   * The model a caller's request is served with, and its targets in the order to try. The caller's policy
   * may remap the requested id (an override) and must allow the id it ends on.
   */
  resolve(requested: string, policy: EffectivePolicy = UNRESTRICTED): { modelId: string; route: ModelRoute; targets: ProviderTarget[] } {
    const modelId = overriddenModel(policy, requested);
    const route = this.routes.get(modelId);
    if (!route) {
      const remapped = modelId === requested ? '' : ` (an override remaps "${requested}" to it)`;
      throw new GatewayError('MODEL_NOT_FOUND', `Model "${modelId}" is not configured${remapped}`, { model: modelId });
    }
    if (!allowsModel(policy, modelId)) {
      throw new GatewayError('MODEL_NOT_ALLOWED', `Model "${modelId}" is not allowed for this caller by its organization or department policy`, { model: modelId });
    }
    return { modelId, route, targets: this.order(route) };
  }

  /** Every model id a caller with this policy may name, with the route it is served by: what resolve accepts. */
  accepted(policy: EffectivePolicy): Array<{ id: string; route: ModelRoute }> {
    const candidates = new Set([...this.routes.keys(), ...overrideSources(policy)]);
    const accepted: Array<{ id: string; route: ModelRoute }> = [];
    for (const id of candidates) {
      const modelId = overriddenModel(policy, id);
      const route = this.routes.get(modelId);
      if (route && allowsModel(policy, modelId)) accepted.push({ id, route });
    }
    return accepted;
  }

  /**
   * The configured model a provider's own model name is served as, for work the gateway did not route (a batch
   * made on the provider and registered): the model with a target on that provider whose upstream name is the
   * given one, or else the longest upstream name it extends with a dated or versioned suffix
   * (`gpt-4o-mini-2024-07-18`, `gemini-2.0-flash-001` for `gpt-4o-mini`, `gemini-2.0-flash`). Ties go to the model
   * declared first. Null when none matches: the work is then recorded unpriced.
   */
  servedAs(provider: string, upstreamModel: string): string | null {
    let best: { id: string; length: number } | null = null;
    for (const [id, route] of this.routes) {
      for (const target of route.targets) {
        if (target.slug !== provider) continue;
        const name = target.upstreamModel;
        const matches = upstreamModel === name || upstreamModel.startsWith(`${name}-`) || upstreamModel.startsWith(`${name}@`);
        if (matches && (!best || name.length > best.length)) best = { id, length: name.length };
      }
    }
    return best?.id ?? null;
  }

  private order(route: ModelRoute): ProviderTarget[] {
    if (route.strategy === 'loadbalance') return weightedOrder(route.targets);
    if (route.strategy === 'single') return route.targets.slice(0, 1);
    return route.targets;
  }
}

/** A weighted random first pick; the others follow in declared order as fallbacks. */
function weightedOrder<T extends { weight: number }>(targets: T[]): T[] {
  const total = targets.reduce((sum, t) => sum + t.weight, 0);
  let ticket = Math.random() * total;
  const first = targets.findIndex((t) => (ticket -= t.weight) < 0);
  const index = first === -1 ? targets.length - 1 : first;
  return [targets[index]!, ...targets.filter((_, i) => i !== index)];
}
