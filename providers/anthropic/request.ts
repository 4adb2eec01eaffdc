/**
 * A canonical chat request -> a Messages API request body. Parameterised for the hosts that wrap the same body
 * (Claude on Vertex AI names the model in the URL and wants `anthropic_version` in the body).
 */
import type { BuiltInTool, ChatCompletionRequest } from '../../core/canonical/chat.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError, validationError } from '../../core/errors.ts';
import { namesUploadedFile, toMessagesConversation, type MessagesBlock } from './conversation.ts';
import { FILES_BETA, messagesSettings, TOOL_BETAS, type MessagesSettings } from './options.ts';

export interface MessagesWireOptions {
  /** Send `model` (target.upstreamModel) in the body; default true. Vertex AI names the model in the URL. */
  includeModel?: boolean;
  /** Send `anthropic_version` in the body (Vertex AI: 'vertex-2023-10-16'); the Messages API takes a header. */
  anthropicVersion?: string;
}

export interface MessagesRequest {
  body: Record<string, unknown>;
  /** anthropic-beta values this request needs (its tools' and options.betas), for the host to send its way. */
  betas: string[];
}

/**
 * reasoning effort -> thinking budget_tokens. 1024 is the API's minimum; the others leave a default answer
 * room to spare while growing roughly fourfold per step.
 */
export const EFFORT_BUDGETS: Record<string, number> = { minimal: 1024, low: 2048, medium: 8192, high: 16384 };
const MIN_BUDGET = 1024;

/** The description that marks the tool standing in for response_format (tool mode). */
export const JSON_TOOL_DESCRIPTION = 'Give your final answer as the input of this tool: it is returned to the user as JSON.';

export interface JsonOutputTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

const unsupported = (what: string, details: Record<string, unknown>) =>
  new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider anthropic does not support ${what}`, { provider: 'anthropic', ...details });

/**
 * The forced tool that serves response_format json_schema / json_object, or null. json_object always goes
 * this way (structured outputs need a full schema); json_schema unless structuredOutput is native. The
 * response side calls this again to recognise the tool, so it depends on the request alone.
 */
export function jsonOutputTool(request: ChatCompletionRequest, settings: MessagesSettings): JsonOutputTool | null {
  const format = request.response_format;
  if (!format || format.type === 'text') return null;
  if (format.type === 'json_schema' && settings.structuredOutput === 'native') return null;
  const spec = (format.type === 'json_schema' ? format.json_schema ?? {} : {}) as { name?: unknown; description?: unknown; schema?: unknown };
  const schema = (spec.schema ?? { type: 'object' }) as Record<string, unknown>;
  if (schema.type !== undefined && schema.type !== 'object') {
    throw validationError([{ path: '/response_format/json_schema/schema', message: 'must describe an object for provider anthropic (tool input is always an object)' }]);
  }
  const taken = new Set((request.tools ?? []).flatMap((t) => (t.type === 'function' ? [t.function.name] : [])));
  let name = (typeof spec.name === 'string' && spec.name !== '' ? spec.name : 'json_response').replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 60);
  while (taken.has(name)) name = `${name}_out`.slice(-64);
  const description = typeof spec.description === 'string' ? `${JSON_TOOL_DESCRIPTION} ${spec.description}` : JSON_TOOL_DESCRIPTION;
  return { name, description, input_schema: { ...schema, type: 'object' } };
}

/** The thinking budget the caller's reasoning parameters ask for, or null for no thinking. */
export function thinkingBudget(request: ChatCompletionRequest, callerMaxTokens: number | undefined): number | null {
  const explicit = request.reasoning?.budget_tokens;
  // An explicit budget is the caller's to get right (the upstream says so if not); 0 turns thinking off.
  if (explicit !== undefined) return explicit > 0 ? explicit : null;
  const effort = request.reasoning_effort ?? request.reasoning?.effort;
  if (!effort) return null;
  const budget = EFFORT_BUDGETS[effort] ?? EFFORT_BUDGETS.medium!;
  // Like OpenAI's max_completion_tokens, the caller's cap covers reasoning and answer: the budget fits under it.
  return callerMaxTokens === undefined ? budget : Math.max(MIN_BUDGET, Math.min(budget, callerMaxTokens - 1));
}

/** Parameters with no Messages API equivalent: refused rather than silently dropped. */
function refuseUnsupported(request: ChatCompletionRequest): void {
  if (request.temperature !== undefined && request.temperature > 1) {
    throw validationError([{ path: '/temperature', message: 'must be <= 1 for provider anthropic (its range is 0 to 1)' }]);
  }
  if (request.logprobs || request.top_logprobs !== undefined) throw unsupported('logprobs', { parameter: 'logprobs' });
  if (request.logit_bias && Object.keys(request.logit_bias).length > 0) throw unsupported('logit_bias', { parameter: 'logit_bias' });
  for (const name of ['frequency_penalty', 'presence_penalty'] as const) {
    if (request[name]) throw unsupported(name, { parameter: name });
  }
}

type MessagesTool = Record<string, unknown>;

function builtInTool(tool: BuiltInTool, index: number, settings: MessagesSettings, betas: Set<string>): MessagesTool {
  const config = tool.config ?? {};
  const versioned = (type: string, name: string): MessagesTool => {
    if (TOOL_BETAS[type]) betas.add(TOOL_BETAS[type]!);
    // The config holds the tool's own Anthropic fields (max_uses, allowed_domains, display_width_px, ...).
    return { ...config, type, name };
  };
  switch (tool.built_in) {
    case 'web_search': return versioned(settings.webSearchTool, 'web_search');
    case 'code_execution': return versioned(settings.codeExecutionTool, 'code_execution');
    case 'computer_use':
      for (const field of ['display_width_px', 'display_height_px']) {
        if (!Number.isInteger(config[field])) throw validationError([{ path: `/tools/${index}/config/${field}`, message: 'is required (an integer) for computer_use on provider anthropic' }]);
      }
      return versioned(settings.computerUseTool, 'computer');
    default: throw unsupported(`the built-in tool ${tool.built_in}`, { tools: [tool.built_in] });
  }
}

/** OpenAI's tool_choice -> Anthropic's; with a json tool, the answer must come as a tool call. */
function toolChoice(request: ChatCompletionRequest, hasFunctions: boolean, json: JsonOutputTool | null): Record<string, unknown> | undefined {
  const choice = request.tool_choice as string | { function?: { name?: string } } | undefined;
  let mapped: Record<string, unknown> | undefined;
  if (json && (!hasFunctions || choice === 'none')) mapped = { type: 'tool', name: json.name };
  else if (typeof choice === 'object' && choice?.function?.name) mapped = { type: 'tool', name: choice.function.name };
  else if (json || choice === 'required') mapped = { type: 'any' };
  else if (choice === 'auto' || choice === 'none') mapped = { type: choice };
  if (request.parallel_tool_calls === false && mapped?.type !== 'none') mapped = { type: 'auto', ...mapped, disable_parallel_tool_use: true };
  return mapped;
}

function cacheControl(request: ChatCompletionRequest): Record<string, unknown> | null {
  if (!request.cache_control?.cache_prefix) return null;
  // Anthropic keeps a prefix for 5 minutes or an hour: the smallest that covers the asked ttl.
  return { type: 'ephemeral', ttl: (request.cache_control.ttl_seconds ?? 0) > 300 ? '1h' : '5m' };
}

export function buildMessagesRequest(
  request: ChatCompletionRequest, target: ProviderTarget, stream: boolean, wire: MessagesWireOptions = {},
): MessagesRequest {
  const settings = messagesSettings(target.options);
  refuseUnsupported(request);
  const betas = new Set(settings.betas);
  const { system, turns } = toMessagesConversation(request.messages);
  if (namesUploadedFile(turns)) betas.add(FILES_BETA);
  const callerMax = request.max_completion_tokens ?? request.max_tokens;
  const budget = thinkingBudget(request, callerMax);
  const json = jsonOutputTool(request, settings);
  if (json && budget !== null) {
    throw unsupported('response_format together with reasoning in tool mode (extended thinking cannot be combined with a forced tool); set the provider option structuredOutput: native for json_schema', { parameter: 'response_format' });
  }

  const body: Record<string, unknown> = {};
  if (wire.anthropicVersion) body.anthropic_version = wire.anthropicVersion;
  if (wire.includeModel !== false) body.model = target.upstreamModel;
  body.max_tokens = callerMax ?? settings.defaultMaxTokens + (budget ?? 0);
  const cache = cacheControl(request);
  if (system.length > 0) {
    body.system = cache ? [{ type: 'text', text: system.join('\n\n'), cache_control: cache }] : system.join('\n\n');
  }
  const lastBlock = turns.at(-1)?.content.at(-1);
  if (cache && lastBlock) lastBlock.cache_control = cache;
  // A turn that is one plain text block reads better (and is documented) as a string.
  body.messages = turns.map((t) => ({
    role: t.role,
    content: t.content.length === 1 && t.content[0]!.type === 'text' && !t.content[0]!.cache_control ? t.content[0]!.text : t.content,
  }));

  const functions = (request.tools ?? []).flatMap((t) => (t.type === 'function' ? [t] : []));
  const tools: MessagesTool[] = (request.tools ?? []).map((tool, i) => (tool.type === 'function'
    ? {
      name: tool.function.name,
      ...(tool.function.description ? { description: tool.function.description } : {}),
      input_schema: tool.function.parameters ?? { type: 'object', properties: {} },
    }
    : builtInTool(tool, i, settings, betas)));
  if (json) tools.push({ ...json });
  if (tools.length > 0) {
    if (cache && system.length === 0) tools[tools.length - 1]!.cache_control = cache;
    body.tools = tools;
    const choice = toolChoice(request, functions.length > 0, json);
    if (choice) body.tool_choice = choice;
  }
  if (request.response_format?.type === 'json_schema' && !json) {
    body.output_config = { format: { type: 'json_schema', schema: request.response_format.json_schema?.schema ?? { type: 'object' } } };
  }

  if (budget !== null) body.thinking = { type: 'enabled', budget_tokens: budget };
  if (request.stop !== undefined && request.stop !== null) {
    const stop = typeof request.stop === 'string' ? [request.stop] : request.stop;
    if (stop.length > 0) body.stop_sequences = stop;
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.top_p !== undefined) body.top_p = request.top_p;
  if (typeof request.top_k === 'number') body.top_k = request.top_k;
  if (request.user) body.metadata = { user_id: request.user };
  if (stream) body.stream = true;
  return { body, betas: [...betas] };
}
