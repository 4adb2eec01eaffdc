/** The shapes /openapi.json documents for /v1/batches. */
import { BATCH_ENDPOINTS } from '../dispatch/provider-batches.ts';
import { pageSchema, type JsonSchema } from '../json-schema.ts';

/** 50,000 lines of a few KiB each: OpenAI's own limit for a batch input file is 200 MB. */
export const BATCH_BODY_LIMIT = 200 * 1024 * 1024;

const counts: JsonSchema = {
  type: 'object', required: ['total', 'completed', 'failed'],
  properties: { total: { type: 'integer' }, completed: { type: 'integer' }, failed: { type: 'integer' } },
};

export const batchObjectSchema: JsonSchema = {
  type: 'object', required: ['id', 'object', 'provider', 'provider_batch_id', 'endpoint', 'status', 'request_counts', 'created_at', 'metadata'],
  properties: {
    id: { type: 'string', description: 'The gateway batch id, batch-<uuid>.' },
    object: { type: 'string', enum: ['batch'] },
    provider: { type: 'string' },
    provider_batch_id: { type: 'string' },
    endpoint: { type: 'string', enum: [...BATCH_ENDPOINTS] },
    status: { type: 'string', enum: ['validating', 'in_progress', 'completed', 'failed', 'cancelled', 'expired'] },
    request_counts: counts,
    created_at: { type: 'integer', description: 'Unix seconds.' },
    metadata: { type: 'object', nullable: true },
    output_file_id: { type: 'string', nullable: true, description: 'Gateway file id of the results, set at a terminal state; null while running and for providers whose results are no file (anthropic).' },
    error_file_id: { type: 'string', nullable: true, description: 'Gateway file id of the failed requests\' results, when the provider wrote one.' },
    completion_webhook_url: { type: 'string', nullable: true },
    cancel_requested_at: { type: 'integer', nullable: true, description: 'Unix seconds: when a cancel was first sent to the provider.' },
    completed_at: { type: 'integer', nullable: true, description: 'Unix seconds: when the gateway saw the terminal state.' },
    webhook_secret: { type: 'string', description: 'The submit response only, when completion_webhook_url was given: the key of the webhook signatures. Never shown again.' },
  },
};

export const batchListSchema: JsonSchema = pageSchema(batchObjectSchema);

export const batchSubmitSchema: JsonSchema = {
  type: 'object', required: ['provider', 'endpoint'],
  description: 'Exactly one of requests (a batch to submit) and provider_batch_id (a batch made on the provider, registered for polling).',
  properties: {
    provider: { type: 'string', description: 'A provider slug: openai or anthropic to submit to; those, azure-openai or gemini to register a batch of.' },
    provider_batch_id: { type: 'string', description: 'The provider\'s id of a batch made outside the gateway (gemini: its name, batches/...): the gateway polls it from now on.' },
    endpoint: { type: 'string', enum: [...BATCH_ENDPOINTS] },
    requests: {
      type: 'array', minItems: 1, maxItems: 50000,
      items: {
        type: 'object', required: ['custom_id', 'method', 'url', 'body'],
        properties: {
          custom_id: { type: 'string', description: 'Unique within the batch.' },
          method: { type: 'string', enum: ['POST'] },
          url: { type: 'string', description: 'The batch\'s endpoint.' },
          body: { type: 'object', description: 'The request body of the endpoint; input_file_id values are gateway file ids.' },
        },
      },
    },
    completion_webhook_url: { type: 'string', description: 'Called with a signed POST at a terminal state.' },
    metadata: { type: 'object' },
  },
};
