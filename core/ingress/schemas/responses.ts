/**
 * POST /v1/responses, per the spec's create body; input items as OpenAI's Responses API defines them. Valid JSON
 * Schema and OpenAPI 3.0 at once. Fields the gateway does not serve (text formats, truncation, include, ...) are
 * refused by name rather than ignored.
 */
import { GATEWAY_FILE_ID_PATTERN } from '../../canonical/chat.ts';
import type { JsonSchema } from '../../json-schema.ts';

const str: JsonSchema = { type: 'string' };
const kind = (...names: string[]): JsonSchema => ({ type: 'string', enum: names });
const fileId: JsonSchema = { type: 'string', pattern: GATEWAY_FILE_ID_PATTERN, description: 'A gateway file id (POST /v1/files); provider ids are refused.' };

const inputText: JsonSchema = { type: 'object', required: ['type', 'text'], properties: { type: kind('input_text'), text: str } };
const outputText: JsonSchema = {
  type: 'object', required: ['type', 'text'],
  properties: { type: kind('output_text'), text: str, annotations: { type: 'array' }, logprobs: { type: 'array' } },
};
const inputImage: JsonSchema = {
  type: 'object', required: ['type'],
  description: 'An image by URL (https: or a data: URL) or as a gateway file.',
  oneOf: [{ required: ['image_url'] }, { required: ['file_id'] }],
  properties: {
    type: kind('input_image'),
    image_url: { type: 'string', minLength: 1 },
    file_id: fileId,
    detail: { type: 'string', enum: ['auto', 'low', 'high'] },
  },
};
const inputFile: JsonSchema = {
  type: 'object', required: ['type'],
  description: 'A gateway file, or the bytes inline as a base64 data: URL in file_data.',
  oneOf: [{ required: ['file_id'] }, { required: ['file_data'] }],
  properties: { type: kind('input_file'), file_id: fileId, file_data: { type: 'string', minLength: 1 }, filename: str },
};

const CONTENT_TYPES = ['input_text', 'output_text', 'input_image', 'input_file'];
const contentPart: JsonSchema = {
  type: 'object', required: ['type'],
  properties: { type: { type: 'string', enum: CONTENT_TYPES } },
  oneOf: [inputText, outputText, inputImage, inputFile],
};

const messageItem: JsonSchema = {
  type: 'object', required: ['role', 'content'],
  properties: {
    type: kind('message'),
    id: str,
    status: str,
    role: { type: 'string', enum: ['user', 'assistant', 'system', 'developer'] },
    content: { oneOf: [str, { type: 'array', items: contentPart }], description: 'Text, or an array of content parts.' },
  },
};

const functionCallItem: JsonSchema = {
  type: 'object', required: ['type', 'call_id', 'name', 'arguments'],
  properties: { type: kind('function_call'), id: str, status: str, call_id: { type: 'string', minLength: 1 }, name: { type: 'string', minLength: 1 }, arguments: str },
};

const functionCallOutputItem: JsonSchema = {
  type: 'object', required: ['type', 'call_id', 'output'],
  properties: {
    type: kind('function_call_output'), id: str, status: str, call_id: { type: 'string', minLength: 1 },
    output: { oneOf: [str, { type: 'array', items: inputText }], description: 'The function result: text, or input_text parts.' },
  },
};

const reasoningItem: JsonSchema = {
  type: 'object', required: ['type'],
  description: 'A reasoning item of an earlier output, accepted so that whole outputs can be sent back; not sent to the provider.',
  properties: { type: kind('reasoning'), id: str, summary: { type: 'array' }, content: { type: 'array' }, encrypted_content: { type: 'string', nullable: true }, status: str },
};

const ITEM_TYPES = ['message', 'function_call', 'function_call_output', 'reasoning', 'item_reference'];

const itemReference: JsonSchema = { type: 'object', required: ['type', 'id'], properties: { type: kind('item_reference'), id: str } };

/** An item without `type` is a message (OpenAI's "easy input message"); item_reference is refused after validation. */
export const inputItemSchema: JsonSchema = {
  type: 'object',
  properties: { type: { type: 'string', enum: ITEM_TYPES } },
  oneOf: [messageItem, functionCallItem, functionCallOutputItem, reasoningItem, itemReference],
};

const functionTool: JsonSchema = {
  type: 'object', required: ['type', 'name'],
  properties: {
    type: kind('function'),
    name: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
    description: { type: 'string', nullable: true },
    parameters: { type: 'object', nullable: true },
    strict: { type: 'boolean', nullable: true },
  },
};

/** The spec's built-ins, and the names OpenAI's client uses for them. */
export const BUILT_IN_ALIASES: Readonly<Record<string, 'file_search' | 'web_search' | 'code_execution' | 'computer_use' | 'search_grounding'>> = {
  file_search: 'file_search', web_search: 'web_search', web_search_preview: 'web_search', code_execution: 'code_execution',
  code_interpreter: 'code_execution', computer_use: 'computer_use', computer_use_preview: 'computer_use', search_grounding: 'search_grounding',
};

const fileSearchTool: JsonSchema = {
  type: 'object', required: ['type', 'vector_store_ids'],
  properties: {
    type: kind('file_search'),
    vector_store_ids: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
    max_num_results: { type: 'integer', minimum: 1, maximum: 50 },
  },
};

const otherBuiltIn: JsonSchema = {
  type: 'object', required: ['type'],
  description: 'Passed to the provider\'s native tool as its config (every field but `type`).',
  properties: { type: kind(...Object.keys(BUILT_IN_ALIASES).filter((name) => name !== 'file_search')) },
};

const toolSchema: JsonSchema = {
  type: 'object', required: ['type'],
  properties: { type: { type: 'string', enum: ['function', ...Object.keys(BUILT_IN_ALIASES)] } },
  oneOf: [functionTool, fileSearchTool, otherBuiltIn],
};

const toolChoiceSchema: JsonSchema = {
  oneOf: [
    { type: 'string', enum: ['auto', 'none', 'required'] },
    { type: 'object', required: ['type', 'name'], properties: { type: kind('function'), name: { type: 'string', minLength: 1 } } },
    {
      type: 'object', required: ['type', 'function'],
      properties: { type: kind('function'), function: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 } } } },
    },
  ],
};

const reasoningSchema: JsonSchema = {
  type: 'object', additionalProperties: false,
  properties: {
    effort: { type: 'string', enum: ['minimal', 'low', 'medium', 'high'] },
    budget_tokens: { type: 'integer', minimum: 0 },
    summary: { type: 'string', nullable: true, description: 'Accepted for OpenAI clients; reasoning text is returned when the provider gives it.' },
  },
  oneOf: [{ required: ['effort'] }, { required: ['budget_tokens'] }],
};

export const responsesRequestSchema: JsonSchema = {
  type: 'object', required: ['model', 'input'], additionalProperties: false,
  properties: {
    model: { type: 'string', minLength: 1, description: 'A model id configured in pipelines.yaml.' },
    input: { oneOf: [{ type: 'string', minLength: 1 }, { type: 'array', minItems: 1, items: inputItemSchema }], description: 'Text, or an array of input items.' },
    provider: { type: 'string', minLength: 1, description: 'Overrides routing: only this provider\'s targets of the model serve the request.' },
    previous_response_id: { type: 'string', minLength: 1, description: 'The gateway id (resp-...) of the response this one continues.' },
    instructions: { type: 'string', nullable: true, description: 'A system message for this request only (not carried into continuations).' },
    tools: { type: 'array', items: toolSchema },
    tool_choice: toolChoiceSchema,
    temperature: { type: 'number', minimum: 0, maximum: 2 },
    top_p: { type: 'number', minimum: 0, maximum: 1 },
    max_output_tokens: { type: 'integer', minimum: 1 },
    store: { type: 'boolean', default: true },
    stream: { type: 'boolean', default: false },
    reasoning: reasoningSchema,
    metadata: { type: 'object', nullable: true, additionalProperties: { type: 'string', maxLength: 512 } },
  },
};

const usage: JsonSchema = {
  type: 'object', required: ['input_tokens', 'output_tokens', 'total_tokens'],
  properties: {
    input_tokens: { type: 'integer' }, output_tokens: { type: 'integer' }, total_tokens: { type: 'integer' },
    input_tokens_details: { type: 'object', properties: { cached_tokens: { type: 'integer' } } },
    output_tokens_details: { type: 'object', properties: { reasoning_tokens: { type: 'integer' } } },
  },
};

export const responseObjectSchema: JsonSchema = {
  type: 'object', required: ['id', 'object', 'provider', 'model', 'status', 'output', 'created_at'],
  properties: {
    id: { type: 'string', description: 'resp-<uuid>, the gateway id.' },
    object: kind('response'),
    provider: str,
    provider_response_id: { type: 'string', nullable: true },
    model: str,
    previous_response_id: { type: 'string', nullable: true },
    status: { type: 'string', enum: ['in_progress', 'completed', 'failed', 'cancelled', 'incomplete'] },
    instructions: { type: 'string', nullable: true },
    output: { type: 'array', items: { type: 'object', required: ['type'], properties: { type: { type: 'string', enum: ['message', 'function_call', 'reasoning'] } } } },
    usage: { ...usage, nullable: true },
    error: { type: 'object', nullable: true, properties: { code: str, message: str } },
    incomplete_details: { type: 'object', nullable: true, properties: { reason: str } },
    metadata: { type: 'object', nullable: true },
    created_at: { type: 'integer' },
    completed_at: { type: 'integer', nullable: true },
  },
};

export const responsesStreamEventSchema: JsonSchema = {
  type: 'object', required: ['type', 'sequence_number'],
  description: 'One event of the text/event-stream answer (`event: <type>` then `data: <JSON>`): response.created, response.in_progress, '
    + 'then per output item response.output_item.added, its deltas (response.content_part.added, response.output_text.delta / .done, '
    + 'response.content_part.done; response.function_call_arguments.delta / .done; response.reasoning_text.delta / .done) and '
    + 'response.output_item.done; last response.completed (or response.incomplete: max_output_tokens reached, or the response was '
    + 'cancelled, status cancelled), with the full response and usage. A failure after the stream started is an `error` event then response.failed.',
  properties: {
    type: str,
    sequence_number: { type: 'integer' },
    response: responseObjectSchema,
    output_index: { type: 'integer' },
    content_index: { type: 'integer' },
    item_id: str,
    item: { type: 'object' },
    part: { type: 'object' },
    delta: str,
    text: str,
    arguments: str,
    code: { type: 'string', nullable: true },
    message: str,
    param: { type: 'string', nullable: true },
  },
};
