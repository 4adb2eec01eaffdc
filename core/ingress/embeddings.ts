/**
 * POST /v1/embeddings: the canonical format is OpenAI's wire format, so parsing is validation and answering
 * writes the canonical result, vectors already in the caller's encoding_format (core/dispatch/embeddings-call.ts).
 */
import type { CanonicalEmbeddingsRequest, EmbeddingsRequest, EmbeddingsResult } from '../canonical/embeddings.ts';
import { GatewayError, validationError } from '../errors.ts';
import { compileRequestSchema } from '../validation.ts';
import type { DispatchEndpoint } from './endpoint.ts';
import { embeddingsRequestSchema, embeddingsResponseSchema, MAX_EMBEDDING_INPUTS } from './schemas/embeddings.ts';

const validateEmbeddings = compileRequestSchema<EmbeddingsRequest>(embeddingsRequestSchema);

/**
 * `input` is checked before the schema, for one clear message per mistake instead of every branch of its oneOf.
 * Token arrays (OpenAI also takes integer arrays) are refused: no other provider takes them, and the gateway
 * would need the model's own tokenizer to turn them back into text.
 */
function inputIssue(input: unknown): { path: string; message: string } | null {
  if (typeof input === 'string') return input === '' ? { path: '/input', message: 'must not be empty' } : null;
  if (!Array.isArray(input)) return input === undefined ? null : { path: '/input', message: 'must be a string or an array of strings' };
  if (input.length === 0) return { path: '/input', message: 'must hold at least one text' };
  if (input.length > MAX_EMBEDDING_INPUTS) return { path: '/input', message: `must hold at most ${MAX_EMBEDDING_INPUTS} texts (got ${input.length})` };
  for (const [i, item] of input.entries()) {
    if (typeof item === 'number' || Array.isArray(item)) return { path: '/input', message: 'token arrays are not accepted: send the texts' };
    if (typeof item !== 'string') return { path: `/input/${i}`, message: 'must be a string' };
    if (item === '') return { path: `/input/${i}`, message: 'must not be empty' };
  }
  return null;
}

export function parseEmbeddingsBody(body: unknown): CanonicalEmbeddingsRequest {
  const issue = body && typeof body === 'object' ? inputIssue((body as { input?: unknown }).input) : null;
  if (issue) throw validationError([issue]);
  const request = validateEmbeddings(body);
  return { modality: 'embeddings', model: request.model, stream: false, body: request };
}

export const embeddingsEndpoint: DispatchEndpoint = {
  kind: 'dispatch',
  method: 'POST',
  path: '/v1/embeddings',
  capability: 'embeddings',
  summary: 'Create embeddings (OpenAI wire format) for one text or a batch.',
  description: `Vectors come as floats, or as base64 of little-endian float32 values with encoding_format base64, whatever the provider returns. At most ${MAX_EMBEDDING_INPUTS} inputs per request.`,
  errorEnvelope: 'canonical',
  requestSchema: embeddingsRequestSchema,
  responses: { '200': { description: 'One embedding per input, by index.', schema: embeddingsResponseSchema } },
  parse: parseEmbeddingsBody,
  respond(ctx) {
    const result = ctx.state.gw.result as EmbeddingsResult | undefined;
    if (result?.object !== 'list') throw new GatewayError('INTERNAL_ERROR', 'The pipeline answered an embeddings request with another kind of answer');
    const tokens = result.usage?.prompt_tokens ?? 0;
    ctx.status = 200;
    ctx.body = {
      object: 'list',
      data: result.data,
      model: result.model,
      usage: { prompt_tokens: tokens, total_tokens: result.usage?.total_tokens ?? tokens },
    };
  },
};
