/** POST /v1/embeddings, per the spec's table. Valid JSON Schema and OpenAPI 3.0 at once. */
import type { JsonSchema } from '../../json-schema.ts';

/** OpenAI's own cap on a batch: more inputs than this in one request are refused. */
export const MAX_EMBEDDING_INPUTS = 2048;

const text: JsonSchema = { type: 'string', minLength: 1 };

export const embeddingsRequestSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['model', 'input'],
  properties: {
    model: { type: 'string', minLength: 1, description: 'A model id configured in pipelines.yaml.' },
    input: {
      description: `One text, or a batch of 1 to ${MAX_EMBEDDING_INPUTS} texts (answered in order, by index). Texts may not be empty; token arrays are not accepted.`,
      oneOf: [text, { type: 'array', minItems: 1, maxItems: MAX_EMBEDDING_INPUTS, items: text }],
    },
    dimensions: { type: 'integer', minimum: 1, description: 'Shorter vectors, for models that support reduction (else 400 CAPABILITY_NOT_SUPPORTED).' },
    encoding_format: { type: 'string', enum: ['float', 'base64'], default: 'float', description: 'base64: little-endian float32 values.' },
    user: { type: 'string' },
  },
};

export const embeddingsResponseSchema: JsonSchema = {
  type: 'object', required: ['object', 'data', 'model', 'usage'],
  properties: {
    object: { type: 'string', enum: ['list'] },
    data: {
      type: 'array',
      items: {
        type: 'object', required: ['object', 'embedding', 'index'],
        properties: {
          object: { type: 'string', enum: ['embedding'] },
          embedding: { oneOf: [{ type: 'array', items: { type: 'number' } }, { type: 'string', description: 'base64, with encoding_format base64' }] },
          index: { type: 'integer', description: 'The position of the input.' },
        },
      },
    },
    model: { type: 'string', description: 'The model after routing (as X-Model).' },
    usage: { type: 'object', required: ['prompt_tokens', 'total_tokens'], properties: { prompt_tokens: { type: 'integer' }, total_tokens: { type: 'integer' } } },
  },
};
