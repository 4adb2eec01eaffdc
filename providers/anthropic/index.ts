/**
 * Anthropic's Messages API. The canonical <-> Messages translation is exported for the other hosts of the same
 * wire (Claude on Vertex AI): build the body with buildMessagesRequest (wire options drop `model` and add
 * `anthropic_version`), read answers with parseMessagesResponse and streams with createMessagesStreamDecoder.
 */
import { defineProvider } from '../../core/dispatch/provider.ts';
import { anthropicBatches } from './batches.ts';
import { ANTHROPIC_VERSION, anthropicChat, anthropicHeaders } from './chat.ts';
import { anthropicErrorFromBody } from './errors.ts';
import { anthropicFiles } from './files.ts';
import { messagesOptionProperties } from './options.ts';

export { anthropicErrorFromBody, anthropicEventError, ERROR_TYPE_STATUS } from './errors.ts';
export { messagesOptionProperties, messagesSettings, TOOL_BETAS, type MessagesSettings } from './options.ts';
export { buildMessagesRequest, EFFORT_BUDGETS, jsonOutputTool, JSON_TOOL_DESCRIPTION, type MessagesRequest, type MessagesWireOptions } from './request.ts';
export { canonicalUsage, finishReason, parseMessagesResponse } from './response.ts';
export { createMessagesStreamDecoder } from './stream.ts';

export default defineProvider({
  slug: 'anthropic',
  family: 'anthropic',
  displayName: 'Anthropic',
  defaultBaseUrl: 'https://api.anthropic.com/v1',
  configSchema: {
    type: 'object', additionalProperties: false,
    description: 'Anthropic Messages API options.',
    properties: {
      ...messagesOptionProperties,
      anthropicVersion: { type: 'string', minLength: 1, default: ANTHROPIC_VERSION, description: 'Sent as the anthropic-version header.' },
    },
  },
  capabilities: {
    // n: the Messages API answers one message per request. files: document blocks (Files API ids, PDF or text).
    chat: { stream: true, tools: true, vision: true, n: false, files: true, builtInTools: ['web_search', 'code_execution', 'computer_use'] },
    // The Files API (beta files-api-2025-04-14).
    files: {},
    // The Message Batches API: /v1/messages bodies only.
    batch: { submit: true },
  },
  chat: anthropicChat,
  files: anthropicFiles,
  batches: anthropicBatches,
  passthroughHeaders: (target) => anthropicHeaders(target, []),
  mapError: (status, body, target) => anthropicErrorFromBody(target, status, body),
});
