/**
 * POST /v1/rerank: the answer has no model field (the resolved model is in X-Model) and its id mirrors
 * X-Request-ID. Sorting, top_n and the documents are the dispatcher's (core/dispatch/rerank-call.ts).
 */
import type { CanonicalRerankRequest, RerankRequest, RerankResult } from '../canonical/rerank.ts';
import { GatewayError, validationError } from '../errors.ts';
import { compileRequestSchema } from '../validation.ts';
import type { DispatchEndpoint } from './endpoint.ts';
import { MAX_RERANK_DOCUMENTS, RERANK_BODY_LIMIT_BYTES, rerankRequestSchema, rerankResponseSchema } from './schemas/rerank.ts';

const validateRerank = compileRequestSchema<RerankRequest>(rerankRequestSchema);

export function parseRerankBody(body: unknown): CanonicalRerankRequest {
  const request = validateRerank(body);
  if (request.top_n !== undefined && request.top_n > request.documents.length) {
    // Out of range is refused, never trimmed silently: the caller may have sent fewer documents than it meant to.
    throw validationError([{ path: '/top_n', message: `must be at most the number of documents (${request.documents.length})` }]);
  }
  return { modality: 'rerank', model: request.model, stream: false, body: request };
}

export const rerankEndpoint: DispatchEndpoint = {
  kind: 'dispatch',
  method: 'POST',
  path: '/v1/rerank',
  capability: 'rerank',
  summary: 'Rank documents by relevance to a query.',
  description: `1 to ${MAX_RERANK_DOCUMENTS.toLocaleString('en-US')} documents, a body of at most 10 MB (413 PAYLOAD_TOO_LARGE). The resolved model is in the X-Model header; the answer has no model field.`,
  errorEnvelope: 'canonical',
  bodyLimitBytes: RERANK_BODY_LIMIT_BYTES,
  requestSchema: rerankRequestSchema,
  responses: { '200': { description: 'The results, most relevant first.', schema: rerankResponseSchema } },
  parse: parseRerankBody,
  respond(ctx) {
    const gw = ctx.state.gw;
    const result = gw.result as RerankResult | undefined;
    if (result?.object !== 'rerank') throw new GatewayError('INTERNAL_ERROR', 'The pipeline answered a rerank request with another kind of answer');
    ctx.status = 200;
    ctx.body = { id: result.id || gw.requestId, results: result.results, meta: result.meta };
  },
};
