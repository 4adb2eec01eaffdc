/** The semantic-cache plugin's configuration: its JSON schema (every property described), its type and its checks. */
import type { JsonSchema } from '../../core/json-schema.ts';
import type { EntryCheckContext } from '../../core/pipeline/plugin.ts';

export interface SemanticCacheConfig {
  /** A model id from `models` whose provider serves embeddings; without it only exact hits are served. */
  embeddingModel?: string;
  threshold: number;
  ttlSeconds: number;
  cacheToolCalls: boolean;
  maxEntryBytes: number;
  /** Absent: true when embeddingModel is set. */
  semantic?: boolean;
  embeddingTimeoutMs: number;
  maxScanRows: number;
}

/** Thirty days: longer than any answer should be trusted, and a bound on what the stores keep. */
export const MAX_TTL_SECONDS = 2_592_000;

export const configSchema: JsonSchema = {
  type: 'object', additionalProperties: false,
  properties: {
    embeddingModel: {
      type: 'string', minLength: 1,
      description: 'A model id from `models` whose provider serves embeddings: the conversation is embedded with it for semantic hits (the operator\'s model: callers\' policies do not apply to it, and each call is metered in the caller\'s name). Without it only exact hits are served.',
    },
    threshold: {
      type: 'number', minimum: 0, maximum: 1, default: 0.95,
      description: 'The cosine similarity at or above which a stored conversation answers a new one (a semantic hit).',
    },
    ttlSeconds: {
      type: 'integer', minimum: 1, maximum: MAX_TTL_SECONDS, default: 3600,
      description: 'How long a stored answer is served, in seconds from when it was stored.',
    },
    cacheToolCalls: {
      type: 'boolean', default: false,
      description: 'Also store answers that call tools (finish_reason tool_calls or function_call). Off: only answers that finished with stop or length are stored.',
    },
    maxEntryBytes: {
      type: 'integer', minimum: 1024, maximum: 16_777_216, default: 1_048_576,
      description: 'Answers larger than this (as stored JSON, in bytes) are not stored.',
    },
    semantic: {
      type: 'boolean',
      description: 'Serve semantic hits (needs embeddingModel). Default: true when embeddingModel is set; false keeps exact hits only while the model stays configured.',
    },
    maxScanRows: {
      type: 'integer', minimum: 1, maximum: 100_000, default: 1000,
      description: 'A semantic lookup compares the conversation with at most this many live entries of its partition (same tenant, model, parameters and instructions), the newest first: a bound on its time.',
    },
    embeddingTimeoutMs: {
      type: 'integer', minimum: 1, maximum: 120_000, default: 5000,
      description: 'How long the embedding of a conversation may take before the request goes on as a miss (and its answer is stored for exact hits only).',
    },
  },
};

/** Whether the entry serves semantic hits. */
export const isSemantic = (config: SemanticCacheConfig): boolean => config.embeddingModel !== undefined && config.semantic !== false;

/** An embedding model must exist in `models` and be served by an embeddings provider; semantic needs one. */
export function checkEntries(entries: readonly SemanticCacheConfig[], context: EntryCheckContext): Array<{ entry: number; message: string }> {
  return entries.flatMap((entry, i) => {
    const model = entry.embeddingModel;
    if (model === undefined) {
      return entry.semantic === true ? [{ entry: i, message: 'semantic: true needs embeddingModel (a model id from `models` with an embeddings provider)' }] : [];
    }
    const known = context.config.models.find((m) => m.id === model);
    if (!known) return [{ entry: i, message: `embeddingModel "${model}" is not a model in \`models\`` }];
    if (!known.enabled) return [{ entry: i, message: `embeddingModel "${model}" is disabled in \`models\`` }];
    if (!context.modelServes(model, 'embeddings')) return [{ entry: i, message: `embeddingModel "${model}" has no target whose provider serves embeddings` }];
    return [];
  });
}
