/**
 * GET /v1/models: the models the caller may name, which is exactly what routing accepts for that caller
 * (RoutingTable.accepted): enabled models of enabled providers, narrowed by the caller's organization and
 * department allow-lists, plus the ids their overrides remap.
 */
import type { JsonSchema } from '../json-schema.ts';
import type { ProviderCapabilities } from '../dispatch/provider.ts';
import type { ModelRoute, RoutingTable } from '../dispatch/routing.ts';
import type { ProviderRegistry } from '../dispatch/provider-registry.ts';
import type { Capability } from '../config/capabilities.ts';
import { UNRESTRICTED } from '../identity/policy.ts';
import type { LocalEndpoint } from '../ingress/endpoint.ts';

export interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  capabilities: string[];
  context_window: number | null;
  max_output_tokens: number | null;
}

export const modelListSchema: JsonSchema = {
  type: 'object', required: ['object', 'data'],
  properties: {
    object: { type: 'string', enum: ['list'] },
    data: {
      type: 'array',
      items: {
        type: 'object', required: ['id', 'object', 'created', 'owned_by', 'capabilities'],
        properties: {
          id: { type: 'string' },
          object: { type: 'string', enum: ['model'] },
          created: { type: 'integer', description: 'Unix seconds: when the gateway loaded this model configuration.' },
          owned_by: { type: 'string', description: 'Slug of the provider the model is routed to first.' },
          capabilities: { type: 'array', items: { type: 'string' } },
          context_window: { type: 'integer', nullable: true, description: 'Max input tokens; null when not configured.' },
          max_output_tokens: { type: 'integer', nullable: true },
        },
      },
    },
  },
};

/**
 * A provider's modalities under the names of the capabilities a key needs to use them (the spec's Model example:
 * chat, completions, embeddings, images), so a caller can match a model's list against its own scopes.
 */
const CAPABILITY_OF_MODALITY: Record<Exclude<keyof ProviderCapabilities, 'files' | 'batch' | 'responses'>, Capability> = {
  chat: 'chat', completion: 'completions', embeddings: 'embeddings', rerank: 'rerank', transcription: 'audio',
  translation: 'audio', speech: 'tts', image: 'images', video: 'video-generation', realtime: 'realtime',
};

/**
 * A provider's files and batch APIs are not something a model does: they stay out of a model's capabilities. A
 * native Responses API neither: every chat model serves /v1/responses, natively or not, alike.
 */
const servedCapabilities = (declared: ProviderCapabilities): Capability[] =>
  [...new Set((Object.keys(declared) as Array<keyof ProviderCapabilities>).flatMap((modality) => (modality === 'files' || modality === 'batch' || modality === 'responses' ? [] : [CAPABILITY_OF_MODALITY[modality]])))];

function describeModel(id: string, route: ModelRoute, created: number, providers: ProviderRegistry): ModelObject {
  const owner = route.targets[0]!.slug;
  const declared = providers.get(owner)?.capabilities ?? {};
  return {
    id,
    object: 'model',
    created,
    owned_by: owner,
    capabilities: route.model.capabilities ?? servedCapabilities(declared),
    context_window: route.model.context_window ?? null,
    max_output_tokens: route.model.max_output_tokens ?? null,
  };
}

export const modelsEndpoint: LocalEndpoint = {
  kind: 'local',
  method: 'GET',
  path: '/v1/models',
  capability: null,
  summary: 'The models this caller may use: exactly the ones routing accepts for it.',
  errorEnvelope: 'canonical',
  responses: { '200': { description: 'A list of Model objects.', schema: modelListSchema } },
  handler({ routing, providers, loadedAt }: { routing: RoutingTable; providers: ProviderRegistry; loadedAt: number }) {
    const created = Math.floor(loadedAt / 1000);
    return async (ctx) => {
      const policy = ctx.state.gw.caller?.policy ?? UNRESTRICTED;
      const data = routing.accepted(policy)
        .map(({ id, route }) => describeModel(id, route, created, providers))
        .sort((a, b) => a.id.localeCompare(b.id));
      ctx.body = { object: 'list', data };
    };
  },
};
