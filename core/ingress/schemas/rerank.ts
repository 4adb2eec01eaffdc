/** POST /v1/rerank, per the spec's table. Valid JSON Schema and OpenAPI 3.0 at once. */
import type { JsonSchema } from '../../json-schema.ts';

/** The spec's limits on a rerank request: 1 to 10,000 documents, 10 MB of body. */
export const MAX_RERANK_DOCUMENTS = 10_000;
export const RERANK_BODY_LIMIT_BYTES = 10 * 1024 * 1024;

export const rerankRequestSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['model', 'query', 'documents'],
  properties: {
    model: { type: 'string', minLength: 1, description: 'A model id configured in pipelines.yaml.' },
    query: { type: 'string', minLength: 1 },
    documents: { type: 'array', minItems: 1, maxItems: MAX_RERANK_DOCUMENTS, items: { type: 'string' } },
    top_n: { type: 'integer', minimum: 1, description: 'At most the number of documents (default: all of them).' },
    return_documents: { type: 'boolean', default: false },
  },
};

export const rerankResponseSchema: JsonSchema = {
  type: 'object', required: ['id', 'results', 'meta'],
  properties: {
    id: { type: 'string', description: 'The request id (X-Request-ID).' },
    results: {
      type: 'array', description: 'By relevance_score, highest first; equal scores in document order.',
      items: {
        type: 'object', required: ['index', 'relevance_score'],
        properties: {
          index: { type: 'integer', description: 'The position of the document in the request.' },
          relevance_score: { type: 'number', minimum: 0, maximum: 1 },
          document: { type: 'object', required: ['text'], properties: { text: { type: 'string' } }, description: 'Only with return_documents: true.' },
        },
      },
    },
    meta: {
      type: 'object', required: ['billed_units'],
      properties: { billed_units: { type: 'object', required: ['search_units'], properties: { search_units: { type: 'integer' } } } },
    },
  },
};
