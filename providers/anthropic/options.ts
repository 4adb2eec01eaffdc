/**
 * The provider block's `options` for the Messages wire. Shared with every host of the Messages API (Claude on
 * Vertex AI reuses these properties in its own configSchema), so the translation reads them from
 * `target.options` whatever the provider.
 */
import type { JsonSchema } from '../../core/json-schema.ts';

export interface MessagesSettings {
  defaultMaxTokens: number;
  structuredOutput: 'tool' | 'native';
  webSearchTool: string;
  codeExecutionTool: string;
  computerUseTool: string;
  betas: string[];
}

export const DEFAULT_MAX_TOKENS = 4096;

/** Tool versions current in Anthropic's docs when this was written; operators pin others per model generation. */
const DEFAULTS: MessagesSettings = {
  defaultMaxTokens: DEFAULT_MAX_TOKENS,
  structuredOutput: 'tool',
  webSearchTool: 'web_search_20250305',
  codeExecutionTool: 'code_execution_20250825',
  computerUseTool: 'computer_20251124',
  betas: [],
};

/**
 * The beta header each tool version needs. Versions not listed (web search, and versions that shipped as
 * generally available) need none.
 */
export const TOOL_BETAS: Record<string, string> = {
  code_execution_20250522: 'code-execution-2025-05-22',
  code_execution_20250825: 'code-execution-2025-08-25',
  computer_20241022: 'computer-use-2024-10-22',
  computer_20250124: 'computer-use-2025-01-24',
  computer_20251124: 'computer-use-2025-11-24',
};

/** The Files API beta: uploads, and `document` blocks whose source is an uploaded file. */
export const FILES_BETA = 'files-api-2025-04-14';

/** The option properties every Messages-API host understands; spread them into a provider's configSchema. */
export const messagesOptionProperties: Record<string, JsonSchema> = {
  defaultMaxTokens: {
    type: 'integer', minimum: 1, default: DEFAULT_MAX_TOKENS,
    description: 'max_tokens sent when the caller gives neither max_tokens nor max_completion_tokens (the Messages API requires one). With reasoning on, the thinking budget is added to it.',
  },
  structuredOutput: {
    type: 'string', enum: ['tool', 'native'], default: 'tool',
    description: 'How response_format json_schema / json_object is served: "tool" forces a tool whose input schema is the requested schema and returns its input as the message content (every Claude model; not combinable with reasoning); "native" sends output_config.format (structured outputs; newer models only).',
  },
  webSearchTool: {
    type: 'string', pattern: '^web_search_[0-9]{8}$', default: DEFAULTS.webSearchTool,
    description: 'Tool type the built-in web_search maps to (Anthropic server tool version).',
  },
  codeExecutionTool: {
    type: 'string', pattern: '^code_execution_[0-9]{8}$', default: DEFAULTS.codeExecutionTool,
    description: 'Tool type the built-in code_execution maps to; its anthropic-beta header is added when that version needs one.',
  },
  computerUseTool: {
    type: 'string', pattern: '^computer_[0-9]{8}$', default: DEFAULTS.computerUseTool,
    description: 'Tool type the built-in computer_use maps to (computer_20251124 for Opus 4.5 and later, computer_20250124 for earlier Claude 4 models); its anthropic-beta header is added.',
  },
  betas: {
    type: 'array', items: { type: 'string', minLength: 1 }, default: [],
    description: 'Extra anthropic-beta values sent with every request (e.g. interleaved-thinking-2025-05-14).',
  },
};

const isString = (v: unknown): v is string => typeof v === 'string' && v !== '';

/** The settings, defaults filled in (options reach translators unvalidated in tests and third-party hosts). */
export function messagesSettings(options: Record<string, unknown>): MessagesSettings {
  const o = options as Partial<Record<keyof MessagesSettings, unknown>>;
  return {
    defaultMaxTokens: Number.isInteger(o.defaultMaxTokens) && (o.defaultMaxTokens as number) > 0 ? (o.defaultMaxTokens as number) : DEFAULTS.defaultMaxTokens,
    structuredOutput: o.structuredOutput === 'native' ? 'native' : 'tool',
    webSearchTool: isString(o.webSearchTool) ? o.webSearchTool : DEFAULTS.webSearchTool,
    codeExecutionTool: isString(o.codeExecutionTool) ? o.codeExecutionTool : DEFAULTS.codeExecutionTool,
    computerUseTool: isString(o.computerUseTool) ? o.computerUseTool : DEFAULTS.computerUseTool,
    betas: Array.isArray(o.betas) ? o.betas.filter(isString) : [],
  };
}
