/** Model id -> ordered provider targets, from the `models` section. */
import type { GatewayConfig, ModelConfig } from '../config/types.ts';
import { GatewayError } from '../errors.ts';
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
        const baseUrl = provider.baseUrl ?? defaultBaseUrl(t.provider);
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

  /** The targets to try, in order. */
  resolve(modelId: string): Array<ProviderTarget> {
    const route = this.routes.get(modelId);
    if (!route) throw new GatewayError('MODEL_NOT_FOUND', `Model "${modelId}" is not configured`, { model: modelId });
    if (route.strategy === 'loadbalance') return weightedOrder(route.targets);
    if (route.strategy === 'single') return route.targets.slice(0, 1);
    return route.targets;
  }

  models(): ModelRoute[] {
    return [...this.routes.values()];
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
