/** POST /v1/messages, per the spec's tables. Valid JSON Schema and OpenAPI 3.0 at once. */
import { GATEWAY_FILE_ID_PATTERN } from '../../canonical/chat.ts';
import type { JsonSchema } from '../../json-schema.ts';

const str: JsonSchema = { type: 'string' };
const kind = (name: string): JsonSchema => ({ type: 'string', enum: [name] });

const textBlock: JsonSchema = {
  type: 'object', required: ['type', 'text'],
  properties: { type: kind('text'), text: str },
};

const imageBlock: JsonSchema = {
  type: 'object', required: ['type', 'source'],
  properties: {
    type: kind('image'),
    source: {
      type: 'object', required: ['type', 'media_type', 'data'],
      properties: {
        type: kind('base64'),
        media_type: { type: 'string', enum: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] },
        data: { type: 'string', minLength: 1, description: 'The image, base64-encoded.' },
      },
    },
  },
};

const documentBlock: JsonSchema = {
  type: 'object', required: ['type', 'source'],
  description: 'A gateway file (POST /v1/files), as the Files API names one: the gateway sends the provider its own id for it.',
  properties: {
    type: kind('document'),
    source: {
      type: 'object', required: ['type', 'file_id'],
      properties: { type: kind('file'), file_id: { type: 'string', pattern: GATEWAY_FILE_ID_PATTERN } },
    },
  },
};

const toolUseBlock: JsonSchema = {
  type: 'object', required: ['type', 'id', 'name', 'input'],
  properties: { type: kind('tool_use'), id: { type: 'string', minLength: 1 }, name: { type: 'string', minLength: 1 }, input: { type: 'object' } },
};

const toolResultBlock: JsonSchema = {
  type: 'object', required: ['type', 'tool_use_id'],
  properties: {
    type: kind('tool_result'),
    tool_use_id: { type: 'string', minLength: 1 },
    content: { oneOf: [str, { type: 'array', items: textBlock }], description: 'Text, or an array of text blocks.' },
    is_error: { type: 'boolean' },
  },
};

const BLOCK_TYPES = ['text', 'image', 'document', 'tool_use', 'tool_result'];

const contentBlock: JsonSchema = {
  type: 'object', required: ['type'],
  properties: { type: { type: 'string', enum: BLOCK_TYPES } },
  oneOf: [textBlock, imageBlock, documentBlock, toolUseBlock, toolResultBlock],
};

export const messagesMessageSchema: JsonSchema = {
  type: 'object', required: ['role', 'content'],
  properties: {
    role: { type: 'string', enum: ['user', 'assistant'] },
    content: {
      oneOf: [str, { type: 'array', items: contentBlock }],
      description: 'Text, or an array of blocks: text, image, document (a gateway file) and tool_result (user); text and tool_use (assistant).',
    },
  },
};

const tool: JsonSchema = {
  type: 'object', required: ['name', 'input_schema'],
  properties: {
    name: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
    description: str,
    input_schema: { type: 'object', description: 'JSON schema of the tool input.' },
  },
};

const toolChoice: JsonSchema = {
  type: 'object', required: ['type'],
  properties: { type: { type: 'string', enum: ['auto', 'any', 'tool'] } },
  oneOf: [
    { type: 'object', properties: { type: kind('auto') } },
    { type: 'object', properties: { type: kind('any') } },
    { type: 'object', required: ['name'], properties: { type: kind('tool'), name: { type: 'string', minLength: 1 } } },
  ],
};

export const messagesRequestSchema: JsonSchema = {
  type: 'object', required: ['model', 'messages', 'max_tokens'],
  properties: {
    model: { type: 'string', minLength: 1, description: 'A model id configured in pipelines.yaml; any provider may serve it.' },
    messages: { type: 'array', minItems: 1, items: messagesMessageSchema },
    max_tokens: { type: 'integer', minimum: 1 },
    system: { oneOf: [str, { type: 'array', items: textBlock }] },
    temperature: { type: 'number', minimum: 0, maximum: 1 },
    top_p: { type: 'number', minimum: 0, maximum: 1 },
    stop_sequences: { type: 'array', items: str },
    stream: { type: 'boolean', default: false },
    tools: { type: 'array', items: tool },
    tool_choice: toolChoice,
    metadata: { type: 'object', properties: { user_id: { type: 'string', nullable: true } } },
  },
};

const usage: JsonSchema = {
  type: 'object', required: ['input_tokens', 'output_tokens'],
  properties: { input_tokens: { type: 'integer' }, output_tokens: { type: 'integer' } },
};

const STOP_REASONS = ['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'refusal'];

export const messageResponseSchema: JsonSchema = {
  type: 'object', required: ['id', 'type', 'role', 'content', 'model', 'stop_reason', 'stop_sequence', 'usage'],
  properties: {
    id: { type: 'string', description: 'msg_...' },
    type: kind('message'),
    role: kind('assistant'),
    content: {
      type: 'array',
      items: {
        type: 'object', required: ['type'],
        properties: { type: { type: 'string', enum: ['text', 'tool_use'] } },
        oneOf: [textBlock, toolUseBlock],
      },
    },
    model: { type: 'string', description: 'The model after routing (as X-Model).' },
    stop_reason: { type: 'string', nullable: true, enum: [...STOP_REASONS, null] },
    stop_sequence: { type: 'string', nullable: true },
    usage,
  },
};

export const messagesStreamEventSchema: JsonSchema = {
  type: 'object', required: ['type'],
  description: 'One event of the text/event-stream answer, sent as `event: <type>` then `data: <JSON>`, in the order '
    + 'message_start, content_block_start, content_block_delta (text_delta) ..., content_block_stop, message_delta, '
    + 'message_stop. usage.input_tokens in message_start is 0 and stop_reason in message_delta is end_turn; tool calls '
    + 'are not streamed. A failure after the stream started is an `error` event.',
  properties: {
    type: { type: 'string', enum: ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop', 'error'] },
    message: { type: 'object' },
    index: { type: 'integer' },
    content_block: { type: 'object' },
    delta: { type: 'object' },
    usage: { type: 'object' },
    error: { type: 'object' },
  },
};
