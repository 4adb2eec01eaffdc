/**
 * The canonical rerank request and answer (POST /v1/rerank). A translator returns the scores it got, in any order;
 * the gateway sorts them by relevance, applies top_n, adds the documents when asked and sets the id.
 */
import type { Usage } from './chat.ts';

export interface RerankRequest {
  model: string;
  query: string;
  /** 1 to 10,000 texts. */
  documents: string[];
  /** How many results to return (default: every document). */
  top_n?: number;
  return_documents?: boolean;
}

export interface RerankScore {
  /** The document's position in the request. */
  index: number;
  /** 0 to 1, higher is more relevant. */
  relevance_score: number;
  document?: { text: string };
}

export interface RerankResult {
  /** Internal tag of the canonical answer; not part of the wire format. */
  object: 'rerank';
  /** Mirrors X-Request-ID on the wire; a translator may leave it empty. */
  id: string;
  results: RerankScore[];
  meta: { billed_units: { search_units: number } };
  /** Tokens, when the provider reports them (some bill rerank by tokens). */
  usage?: Usage;
}

/** Documents one search unit covers: Cohere's definition, which the others that bill per search follow. */
export const DOCUMENTS_PER_SEARCH_UNIT = 100;

/** Search units of a rerank over `documents` documents by that rule: one per started hundred, at least one. */
export const searchUnitsFor = (documents: number): number => Math.max(1, Math.ceil(documents / DOCUMENTS_PER_SEARCH_UNIT));

export interface CanonicalRerankRequest {
  modality: 'rerank';
  model: string;
  stream: false;
  body: RerankRequest;
}
