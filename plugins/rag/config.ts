/** The rag plugin's configuration: its JSON schema (every property described), its type, and the per-caller view. */
import type { JsonSchema } from '../../core/json-schema.ts';
import { callerOverrides, type Caller } from '../../core/pipeline/caller.ts';

export type Placement = 'system' | 'user';

/** What one level (the pipeline entry, an organization, a department, a key) says; a level sets only what it names. */
export interface RagSettings {
  enabled?: boolean;
  vectorStoreIds?: string[];
  topK?: number;
  threshold?: number;
  placement?: Placement;
}

export interface RagConfig extends RagSettings {
  topK: number;
  placement: Placement;
  onRetrievalError: 'open' | 'closed';
  organizations: Record<string, RagSettings>;
  departments: Record<string, RagSettings>;
  keys: Record<string, RagSettings>;
}

export type EffectiveRag = Required<Pick<RagSettings, 'enabled' | 'vectorStoreIds' | 'topK' | 'placement'>> & { threshold?: number };

const settingsProperties: Record<string, JsonSchema> = {
  enabled: { type: 'boolean', description: 'Whether retrieval runs for these callers (default true where vectorStoreIds is non-empty).' },
  vectorStoreIds: {
    type: 'array', maxItems: 100, uniqueItems: true, items: { type: 'string', pattern: '^vs-[0-9a-f-]{36}$' },
    description: 'Gateway vector store ids (vs-<uuid>) searched for every request. Only the stores of the caller\'s tenant are searched; others are left out.',
  },
  topK: { type: 'integer', minimum: 1, maximum: 50, description: 'How many chunks are injected at most (the best by cosine similarity across the stores).' },
  threshold: { type: 'number', minimum: 0, maximum: 1, description: 'Minimum cosine similarity of an injected chunk; chunks below it are left out.' },
  placement: {
    type: 'string', enum: ['system', 'user'],
    description: '"system": one system message after the request\'s own system messages (Responses: before the instructions). "user": prefixed to the last user message.',
  },
};

const levelSchema = (level: string): JsonSchema => ({
  type: 'object', default: {},
  description: `Settings per ${level} id, replacing the pipeline entry's for its callers field by field (key over department over organization).`,
  additionalProperties: { type: 'object', additionalProperties: false, properties: settingsProperties },
});

export const configSchema: JsonSchema = {
  type: 'object', additionalProperties: false,
  properties: {
    ...settingsProperties,
    topK: { ...settingsProperties.topK, default: 5 },
    placement: { ...settingsProperties.placement, default: 'system' },
    onRetrievalError: {
      type: 'string', enum: ['open', 'closed'], default: 'open',
      description: 'When the search fails (the embeddings provider or the database): "open" sends the request without context and logs a warning, "closed" fails it with that error.',
    },
    organizations: levelSchema('organization'),
    departments: levelSchema('department'),
    keys: levelSchema('API key'),
  },
};

/** The settings for a caller: the entry's, then its organization's, department's and key's, each replacing what it names. */
export function settingsFor(config: RagConfig, caller: Caller | undefined): EffectiveRag {
  const levels: RagSettings[] = [config, ...callerOverrides(config, caller)];
  const merged: RagSettings = {};
  for (const level of levels) {
    for (const [key, value] of Object.entries(level)) if (value !== undefined && key in settingsProperties) (merged as Record<string, unknown>)[key] = value;
  }
  const vectorStoreIds = merged.vectorStoreIds ?? [];
  return {
    enabled: (merged.enabled ?? true) && vectorStoreIds.length > 0,
    vectorStoreIds,
    topK: merged.topK ?? config.topK,
    placement: merged.placement ?? config.placement,
    ...(merged.threshold === undefined ? {} : { threshold: merged.threshold }),
  };
}
