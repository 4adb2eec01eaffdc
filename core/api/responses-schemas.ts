/** The shapes /openapi.json documents for reading, deleting and cancelling stored responses (/v1/responses). */
import { deletedSchema, pageSchema, type JsonSchema } from '../json-schema.ts';
import { RESPONSE_STATES } from '../store/responses.ts';

/** What responseObject (core/ingress/responses-object.ts) answers. */
export const responseObjectSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'object', 'provider', 'provider_response_id', 'model', 'previous_response_id', 'status', 'instructions', 'output', 'usage',
    'error', 'incomplete_details', 'metadata', 'created_at', 'completed_at'],
  properties: {
    id: { type: 'string', description: 'The gateway response id, resp-<uuid>.' },
    object: { type: 'string', enum: ['response'] },
    provider: { type: 'string', description: 'The provider slug that produced (or is producing) the response.' },
    provider_response_id: { type: 'string', nullable: true, description: 'The provider\'s own id, once it has answered.' },
    model: { type: 'string', description: 'The model the provider answered with, else the one requested.' },
    previous_response_id: { type: 'string', nullable: true, description: 'The gateway id this response continues.' },
    status: { type: 'string', enum: [...RESPONSE_STATES] },
    instructions: { type: 'string', nullable: true },
    output: { type: 'array', items: { type: 'object' }, description: 'The output items, in full (partial for a cancelled response).' },
    usage: {
      type: 'object', nullable: true, required: ['input_tokens', 'output_tokens', 'total_tokens'],
      properties: { input_tokens: { type: 'integer' }, output_tokens: { type: 'integer' }, total_tokens: { type: 'integer' } },
    },
    error: {
      type: 'object', nullable: true, required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' } },
    },
    incomplete_details: { type: 'object', nullable: true },
    metadata: { type: 'object', nullable: true },
    created_at: { type: 'integer', description: 'Unix seconds.' },
    completed_at: { type: 'integer', nullable: true, description: 'Unix seconds: when the response ended; null while in progress.' },
  },
};

export const responseListSchema: JsonSchema = pageSchema(responseObjectSchema);

export const responseDeletedSchema: JsonSchema = deletedSchema('response');
