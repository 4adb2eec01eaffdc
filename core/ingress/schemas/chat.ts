/** POST /v1/chat/completions, per the spec's tables. Valid JSON Schema and OpenAPI 3.0 at once. */
import { GATEWAY_FILE_ID_PATTERN } from '../../canonical/chat.ts';
import type { JsonSchema } from '../../json-schema.ts';

const textPart: JsonSchema = {
  type: 'object', required: ['type', 'text'],
  properties: { type: { type: 'string', enum: ['text'] }, text: { type: 'string' } },
};

const imagePart: JsonSchema = {
  type: 'object', required: ['type', 'image_url'],
  properties: {
    type: { type: 'string', enum: ['image_url'] },
    image_url: {
      type: 'object', required: ['url'],
      properties: { url: { type: 'string', minLength: 1 }, detail: { type: 'string', enum: ['auto', 'low', 'high'] } },
    },
  },
};

const filePart: JsonSchema = {
  type: 'object', required: ['type', 'file'],
  description: 'A file: `file_id` names a gateway file (file-<uuid>, from POST /v1/files), or `file_data` carries it inline as a base64 data: URL.',
  properties: {
    type: { type: 'string', enum: ['file'] },
    file: {
      type: 'object',
      oneOf: [{ required: ['file_id'] }, { required: ['file_data'] }],
      properties: {
        file_id: { type: 'string', pattern: GATEWAY_FILE_ID_PATTERN, description: 'A gateway file id; the gateway sends the provider its own id for the file. Provider ids are refused.' },
        file_data: { type: 'string', minLength: 1, description: 'The file as a data: URL, e.g. data:application/pdf;base64,...' },
        filename: { type: 'string' },
      },
    },
  },
};

const contentPart: JsonSchema = {
  type: 'object', required: ['type'],
  properties: { type: { type: 'string', enum: ['text', 'image_url', 'file'] } },
  oneOf: [textPart, imagePart, filePart],
};

const toolCall: JsonSchema = {
  type: 'object', required: ['id', 'type', 'function'],
  properties: {
    id: { type: 'string' },
    type: { type: 'string', enum: ['function'] },
    function: {
      type: 'object', required: ['name', 'arguments'],
      properties: { name: { type: 'string' }, arguments: { type: 'string' } },
    },
  },
};

export const chatMessageSchema: JsonSchema = {
  type: 'object', required: ['role', 'content'],
  properties: {
    role: { type: 'string', enum: ['system', 'developer', 'user', 'assistant', 'tool'] },
    content: {
      oneOf: [{ type: 'string', nullable: true }, { type: 'array', items: contentPart }],
      description: 'Text, or an array of text, image_url and file parts; null only for assistant messages with tool calls.',
    },
    name: { type: 'string' },
    tool_calls: { type: 'array', items: toolCall },
    tool_call_id: { type: 'string' },
  },
};

const functionTool: JsonSchema = {
  type: 'object', required: ['type', 'function'],
  properties: {
    type: { type: 'string', enum: ['function'] },
    function: {
      type: 'object', required: ['name'],
      properties: {
        name: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
        description: { type: 'string' },
        parameters: { type: 'object' },
        strict: { type: 'boolean', nullable: true },
      },
    },
  },
};

const builtInTool: JsonSchema = {
  type: 'object', required: ['type', 'built_in'],
  properties: {
    type: { type: 'string', enum: ['built_in'] },
    built_in: { type: 'string', enum: ['file_search', 'web_search', 'code_execution', 'computer_use', 'search_grounding'] },
    config: { type: 'object' },
  },
};

const effort: JsonSchema = { type: 'string', enum: ['minimal', 'low', 'medium', 'high'] };

export const chatRequestSchema: JsonSchema = {
  type: 'object', required: ['model', 'messages'],
  properties: {
    model: { type: 'string', minLength: 1, description: 'A model id configured in pipelines.yaml.' },
    messages: { type: 'array', minItems: 1, items: chatMessageSchema },
    temperature: { type: 'number', minimum: 0, maximum: 2 },
    top_p: { type: 'number', minimum: 0, maximum: 1 },
    max_tokens: { type: 'integer', minimum: 1 },
    max_completion_tokens: { type: 'integer', minimum: 1 },
    stream: { type: 'boolean', default: false },
    stream_options: { type: 'object', nullable: true, properties: { include_usage: { type: 'boolean' } } },
    stop: { oneOf: [{ type: 'string', nullable: true }, { type: 'array', items: { type: 'string' }, maxItems: 4 }] },
    n: { type: 'integer', minimum: 1, maximum: 10 },
    tools: { type: 'array', items: { type: 'object', required: ['type'], properties: { type: { type: 'string', enum: ['function', 'built_in'] } }, oneOf: [functionTool, builtInTool] } },
    tool_choice: {
      oneOf: [
        { type: 'string', enum: ['auto', 'none', 'required'] },
        { type: 'object', required: ['type', 'function'], properties: { type: { type: 'string', enum: ['function'] }, function: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } } },
      ],
    },
    response_format: {
      type: 'object', required: ['type'],
      properties: {
        type: { type: 'string', enum: ['text', 'json_object', 'json_schema'] },
        json_schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, schema: { type: 'object' }, strict: { type: 'boolean', nullable: true } } },
      },
    },
    reasoning_effort: effort,
    reasoning: {
      type: 'object',
      properties: { effort, budget_tokens: { type: 'integer', minimum: 0 }, exclude_from_output: { type: 'boolean' } },
    },
    cache_control: {
      type: 'object',
      properties: { cache_prefix: { type: 'boolean' }, ttl_seconds: { type: 'integer', minimum: 1 } },
    },
    seed: { type: 'integer' },
    user: { type: 'string' },
    frequency_penalty: { type: 'number', minimum: -2, maximum: 2 },
    presence_penalty: { type: 'number', minimum: -2, maximum: 2 },
    logprobs: { type: 'boolean' },
    top_logprobs: { type: 'integer', minimum: 0, maximum: 20 },
    logit_bias: { type: 'object', additionalProperties: { type: 'number', minimum: -100, maximum: 100 } },
  },
};

const usage: JsonSchema = {
  type: 'object', required: ['prompt_tokens', 'completion_tokens', 'total_tokens'],
  properties: {
    prompt_tokens: { type: 'integer' }, completion_tokens: { type: 'integer' }, total_tokens: { type: 'integer' },
  },
};

export const chatCompletionSchema: JsonSchema = {
  type: 'object', required: ['id', 'object', 'created', 'model', 'choices'],
  properties: {
    id: { type: 'string' },
    object: { type: 'string', enum: ['chat.completion'] },
    created: { type: 'integer' },
    model: { type: 'string' },
    choices: {
      type: 'array',
      items: {
        type: 'object', required: ['index', 'message', 'finish_reason'],
        properties: {
          index: { type: 'integer' },
          message: {
            type: 'object', required: ['role', 'content'],
            properties: { role: { type: 'string', enum: ['assistant'] }, content: { type: 'string', nullable: true }, tool_calls: { type: 'array', items: toolCall } },
          },
          finish_reason: { type: 'string', nullable: true, enum: ['stop', 'length', 'tool_calls', 'content_filter', 'function_call', null] },
        },
      },
    },
    usage,
  },
};

export const chatCompletionChunkSchema: JsonSchema = {
  type: 'object', required: ['id', 'object', 'created', 'model', 'choices'],
  description: 'One `data:` event of the text/event-stream answer; the stream ends with `data: [DONE]`.',
  properties: {
    id: { type: 'string' },
    object: { type: 'string', enum: ['chat.completion.chunk'] },
    created: { type: 'integer' },
    model: { type: 'string' },
    choices: {
      type: 'array',
      items: {
        type: 'object', required: ['index', 'delta', 'finish_reason'],
        properties: {
          index: { type: 'integer' },
          delta: { type: 'object', properties: { role: { type: 'string' }, content: { type: 'string', nullable: true } } },
          finish_reason: { type: 'string', nullable: true },
        },
      },
    },
    usage: { ...usage, nullable: true },
  },
};
