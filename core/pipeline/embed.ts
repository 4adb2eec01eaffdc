/**
 * Embeddings the gateway makes on its own behalf (vector-store ingestion and search, RAG, file_search, the
 * semantic cache): they go through the same dispatch as /v1/embeddings (routing, retries, breakers), and each call
 * is metered as work outside a request (core/pipeline/metered.ts) in the name of the caller it serves, so that
 * usage and budgets see it.
 */
import type { Caller, EffectivePolicy } from './caller.ts';

/**
 * Whom the work is for: a request's caller, or one recorded with background work (a vector store's creator).
 * The policy applies only when `applyPolicy` is set.
 */
export type EmbedCaller = Pick<Caller, 'kind' | 'id' | 'tenantId' | 'organizationId' | 'departmentId'> & { policy?: EffectivePolicy };

/**
 * What an embedding served, reported as the metered work's source: `vector-store` (ingestion and search),
 * `file_search` (the built-in tool), or the name of the plugin that embeds.
 */
export type EmbedPurpose = string;

export interface EmbedRequest {
  /** A model id from `models` with an embeddings target. */
  model: string;
  /** At most 256 texts per call; the caller splits larger work. */
  input: readonly string[];
  /** Whom the work is for: its tenant owns the usage record. Undefined in a deployment without auth. */
  caller: EmbedCaller | undefined;
  /**
   * Whether the caller's policy (model allow-lists and overrides) applies: yes for a model the caller chose (a
   * vector store's embedding_model), no for one the operator configured (the semantic cache's).
   */
  applyPolicy: boolean;
  purpose: EmbedPurpose;
  signal?: AbortSignal;
}

export interface Embedded {
  /** One per input, in input order, as floats. */
  vectors: number[][];
  /** The configured model the work ran on, the provider and the provider's name for it. */
  model: string;
  provider: string;
  upstreamModel: string;
  promptTokens: number;
}

export interface EmbeddingService {
  embed(request: EmbedRequest): Promise<Embedded>;
}

/** The most texts one embed call takes: below every provider's per-request input cap the gateway knows of. */
export const MAX_EMBED_INPUTS = 96;
