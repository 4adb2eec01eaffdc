/**
 * Embeddings in the OpenAI wire format (POST /embeddings), which is also the canonical one. `createOpenAiEmbeddings`
 * is the family's one translator: OpenAI uses it as is; the OpenAI-compatible catalogue and Azure pass small
 * hooks for what they do differently (a path, headers, a field they name otherwise or refuse).
 */
import type { EmbeddingsRequest, EmbeddingsResult } from '../../core/canonical/embeddings.ts';
import type { EmbeddingsTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { malformed, openaiHeaders } from './chat.ts';

/** OpenAI's models with shortened vectors: text-embedding-3-small and -large (ada-002 has none). */
export const OPENAI_DIMENSIONS_MODELS = /^text-embedding-3-/;

export interface OpenAiEmbeddingsHooks {
  /** The request path under the base URL, query included (default `/embeddings`). */
  path?(target: ProviderTarget): string;
  /** The request headers, credential included (default: Bearer and OpenAI's organization/project). */
  headers?(target: ProviderTarget): Record<string, string>;
  /** Whether an upstream model returns shorter vectors on `dimensions` (default: text-embedding-3-*). */
  supportsDimensions?(upstreamModel: string): boolean;
  /**
   * False for upstreams that do not take `encoding_format: base64`: they are asked for floats, and the gateway
   * encodes them for a caller who asked for base64.
   */
  base64?: boolean;
  /** Adjusts the outgoing body in place (renames, fields the upstream refuses or requires). */
  body?(body: Record<string, unknown>, request: EmbeddingsRequest, target: ProviderTarget): void;
}

interface WireEmbedding { embedding?: unknown; index?: unknown }

export function createOpenAiEmbeddings(hooks: OpenAiEmbeddingsHooks = {}): EmbeddingsTranslator {
  const base64 = hooks.base64 ?? true;
  return {
    toUpstream(request, target) {
      // The caller's encoding is asked for where the upstream has it: base64 is a quarter of the bytes of JSON floats.
      const body: Record<string, unknown> = { model: target.upstreamModel, input: request.input };
      // Float-only servers get no encoding_format at all: floats are everyone's default, and some reject the field.
      if (base64) body.encoding_format = request.encoding_format ?? 'float';
      if (request.dimensions !== undefined) body.dimensions = request.dimensions;
      if (request.user !== undefined) body.user = request.user;
      hooks.body?.(body, request, target);
      return {
        method: 'POST',
        path: hooks.path?.(target) ?? '/embeddings',
        headers: hooks.headers?.(target) ?? openaiHeaders(target),
        body: JSON.stringify(body),
      };
    },

    fromUpstream(body, target) {
      const answer = body as { data?: unknown; model?: unknown; usage?: { prompt_tokens?: unknown; total_tokens?: unknown } } | null;
      if (!answer || typeof answer !== 'object' || !Array.isArray(answer.data)) throw malformed(target, 'embeddings answer');
      const data = (answer.data as Array<WireEmbedding | null>).map((item, position) => {
        if (!item || typeof item !== 'object') throw malformed(target, 'embeddings answer');
        // OpenAI lists the data in input order and says so with `index`; a server that leaves it out keeps the order.
        const index = item.index === undefined ? position : item.index;
        return { object: 'embedding' as const, embedding: item.embedding as EmbeddingsResult['data'][number]['embedding'], index: index as number };
      });
      const result: EmbeddingsResult = { object: 'list', data, model: typeof answer.model === 'string' ? answer.model : target.upstreamModel };
      const prompt = answer.usage?.prompt_tokens;
      if (typeof prompt === 'number' && Number.isFinite(prompt)) {
        const total = typeof answer.usage?.total_tokens === 'number' ? answer.usage.total_tokens : prompt;
        result.usage = { prompt_tokens: prompt, completion_tokens: 0, total_tokens: total };
      }
      return result;
    },

    supportsDimensions: (upstreamModel) => (hooks.supportsDimensions ?? ((model) => OPENAI_DIMENSIONS_MODELS.test(model)))(upstreamModel),
  };
}

export const openaiEmbeddings: EmbeddingsTranslator = createOpenAiEmbeddings();
