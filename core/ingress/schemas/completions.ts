/**
 * POST /v1/completions: the chat body (the spec's), or the body legacy clients send (`prompt`, `suffix`, `echo`,
 * `best_of`, an integer `logprobs`). Valid JSON Schema and OpenAPI 3.0 at once.
 */
import type { JsonSchema } from '../../json-schema.ts';
import { chatRequestSchema } from './chat.ts';

/** OpenAI's legacy API generates 16 tokens when the caller names no limit; the prompt form keeps that default. */
export const LEGACY_DEFAULT_MAX_TOKENS = 16;

/** Legacy `logprobs` counts the alternatives per token; 5 is the legacy API's maximum. */
export const LEGACY_MAX_LOGPROBS = 5;

/** The chat parameters, every one accepted with either form. */
const chatProperties = chatRequestSchema.properties as Record<string, JsonSchema>;

export const completionsRequestSchema: JsonSchema = {
  type: 'object',
  required: ['model'],
  description: 'Either the chat request body (`messages`) or the legacy one (`prompt`), never both. Every chat '
    + 'parameter is accepted with either. With `prompt` and no max_tokens or max_completion_tokens, max_tokens is '
    + `${LEGACY_DEFAULT_MAX_TOKENS}, the legacy default.`,
  anyOf: [{ required: ['messages'] }, { required: ['prompt'] }],
  properties: {
    ...chatProperties,
    prompt: {
      description: 'The legacy prompt: to the provider\'s completions API where it has one, else sent as one user message. A string, or an array holding exactly one string: '
        + 'several prompts and token arrays are refused (400 VALIDATION_ERROR), the answer has one choice.',
      oneOf: [{ type: 'string' }, { type: 'array', minItems: 1, maxItems: 1, items: { type: 'string' } }],
    },
    suffix: {
      type: 'string', nullable: true,
      description: 'Text after the insertion point, with prompt: served by providers with a completions API; targets '
        + 'without one are skipped, and with none left (or with messages) it is 400 CAPABILITY_NOT_SUPPORTED. null or "" insert nothing.',
    },
    echo: {
      type: 'boolean', nullable: true,
      description: 'With prompt: the answer text starts with the prompt (a completions API echoes it; through chat the '
        + 'gateway prepends it, and a stream sends it first). Not with messages (400 VALIDATION_ERROR).',
    },
    best_of: {
      type: 'integer', nullable: true, minimum: 1, maximum: 20,
      description: 'With prompt, 2 to 20 are served by providers with a completions API (scored server-side, one choice '
        + 'returned); targets without one are skipped, with none left (or with messages) 400 CAPABILITY_NOT_SUPPORTED.',
    },
    logprobs: {
      description: 'A boolean (the chat form, passed to the chat API; the answer carries no log probabilities), or null; '
        + `or, with prompt, the legacy integer (0 to ${LEGACY_MAX_LOGPROBS}), served by providers with a completions API and `
        + 'answered with its logprobs object; targets without one are skipped, with none left (or with messages) 400 CAPABILITY_NOT_SUPPORTED.',
      oneOf: [{ type: 'boolean', nullable: true }, { type: 'integer', minimum: 0, maximum: LEGACY_MAX_LOGPROBS }],
    },
  },
};

const usageSchema: JsonSchema = {
  type: 'object', required: ['prompt_tokens', 'completion_tokens', 'total_tokens'],
  properties: { prompt_tokens: { type: 'integer' }, completion_tokens: { type: 'integer' }, total_tokens: { type: 'integer' } },
};

export const textCompletionSchema: JsonSchema = {
  type: 'object', required: ['id', 'object', 'created', 'model', 'choices', 'usage'],
  properties: {
    id: { type: 'string', pattern: '^cmpl-' },
    object: { type: 'string', enum: ['text_completion'] },
    created: { type: 'integer' },
    model: { type: 'string', description: 'The model after routing (as X-Model).' },
    choices: {
      type: 'array', minItems: 1, maxItems: 1,
      items: {
        type: 'object', required: ['text', 'index', 'finish_reason'],
        properties: {
          text: { type: 'string', description: 'The generated text; with echo, the prompt followed by it.' },
          index: { type: 'integer', enum: [0] },
          logprobs: {
            type: 'object', nullable: true,
            description: 'Present when a completions API served the prompt: its legacy log probabilities (tokens, token_logprobs, top_logprobs, text_offset), or null.',
          },
          finish_reason: { type: 'string', nullable: true, enum: ['stop', 'length', 'tool_calls', 'content_filter', 'function_call', null] },
        },
      },
    },
    usage: usageSchema,
  },
};

export const textCompletionChunkSchema: JsonSchema = {
  type: 'object', required: ['id', 'object', 'created', 'model', 'choices'],
  description: 'One `data:` event of the text/event-stream answer; the stream ends with `data: [DONE]`. With echo, '
    + 'the first chunk\'s text is the prompt. With stream_options.include_usage, a last chunk with no choices carries usage.',
  properties: {
    id: { type: 'string' },
    object: { type: 'string', enum: ['text_completion'] },
    created: { type: 'integer' },
    model: { type: 'string' },
    choices: {
      type: 'array', maxItems: 1,
      items: {
        type: 'object', required: ['text', 'index', 'finish_reason'],
        properties: { text: { type: 'string' }, index: { type: 'integer' }, logprobs: { type: 'object', nullable: true }, finish_reason: { type: 'string', nullable: true } },
      },
    },
    usage: usageSchema,
  },
};
