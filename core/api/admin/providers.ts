/** GET /admin/v1/providers: the configured providers, the models routed to each, and their breakers' states. */
import type { GatewayConfig } from '../../config/types.ts';
import type { BreakerState } from '../../dispatch/breakers.ts';
import type { JsonSchema } from '../../json-schema.ts';

export interface ProviderSummary {
  id: string;
  object: 'provider';
  enabled: boolean;
  /** Set in the config; null when the provider's default is used. Never the API key or headers. */
  baseUrl: string | null;
  models: string[];
  /** One per upstream (base URL) this instance has called; none before its first call. */
  breakers: Array<Omit<BreakerState, 'provider'>>;
}

export type ProviderSummaries = () => { object: 'list'; data: ProviderSummary[] };

export function providerSummaries(config: Pick<GatewayConfig, 'providers' | 'models'>, breakerStates: () => BreakerState[]): ProviderSummaries {
  return () => {
    const states = breakerStates();
    const data = Object.entries(config.providers).map(([id, provider]): ProviderSummary => ({
      id,
      object: 'provider',
      enabled: provider.enabled,
      baseUrl: provider.baseUrl ?? null,
      models: config.models
        .filter((model) => model.provider === id || (model.targets ?? []).some((target) => target.provider === id))
        .map((model) => model.id),
      breakers: states.filter((state) => state.provider === id).map(({ provider: _provider, ...state }) => state),
    }));
    return { object: 'list', data };
  };
}

export const providerSummarySchema: JsonSchema = {
  type: 'object', required: ['id', 'object', 'enabled', 'baseUrl', 'models', 'breakers'],
  properties: {
    id: { type: 'string' },
    object: { type: 'string', enum: ['provider'] },
    enabled: { type: 'boolean' },
    baseUrl: { type: 'string', nullable: true, description: 'As configured; null when the provider\'s default base URL is used.' },
    models: { type: 'array', items: { type: 'string' }, description: 'Ids of the models that route to this provider.' },
    breakers: {
      type: 'array', description: 'One per upstream this instance has called: closed, open or half-open, with its rolling counts.',
      items: {
        type: 'object', required: ['baseUrl', 'state', 'failures', 'successes'],
        properties: {
          baseUrl: { type: 'string' },
          state: { type: 'string', enum: ['closed', 'open', 'half-open'] },
          failures: { type: 'integer' },
          successes: { type: 'integer' },
        },
      },
    },
  },
};
