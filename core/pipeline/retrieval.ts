/**
 * Search of the gateway-owned vector stores, for the parts of the gateway that put retrieved text into a request
 * (the file_search built-in tool, plugins such as RAG). Implemented in core/retrieval/.
 */
import type { EmbedCaller, EmbedPurpose } from './embed.ts';

export interface RetrievalQuery {
  /** Whose stores: only the caller's tenant's are searched. */
  caller: EmbedCaller | undefined;
  storeIds: readonly string[];
  query: string;
  /** 1 to 50. */
  topK: number;
  /** Minimum cosine similarity, 0 to 1. */
  threshold?: number;
  /** Reported with the query's embedding (core/pipeline/embed.ts). */
  purpose: EmbedPurpose;
  /**
   * A store id the tenant does not have: `fail` answers 404 NOT_FOUND (ids a client named), `skip` leaves it out
   * (ids an operator configured for several tenants).
   */
  unknownStores: 'fail' | 'skip';
  signal?: AbortSignal;
}

export interface RetrievedChunk {
  storeId: string;
  fileId: string;
  documentId: string;
  chunkIndex: number;
  content: string;
  /** Cosine similarity to the query. */
  score: number;
}

export interface RetrievalService {
  /** The best chunks across the stores, best first; stores embedded with different models are each queried with theirs. */
  search(query: RetrievalQuery): Promise<RetrievedChunk[]>;
}
