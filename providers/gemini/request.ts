/**
 * Canonical request -> a GenerateContentRequest body, shared by the Gemini API and Vertex AI (same schema).
 * The model is not in the body: it is in the URL, which each provider builds itself.
 */
import type { BuiltInTool, ChatCompletionRequest, ChatMessage, ContentPart, FunctionTool } from '../../core/canonical/chat.ts';
import { GatewayError, validationError } from '../../core/errors.ts';
import { geminiMessageParts, type GeminiContent, type GeminiPart } from './contents.ts';

/**
 * Gemini 2.x models take a token budget, Gemini 3 and later a thinking level (they reject a request with
 * both). Efforts become budgets inside every 2.5 model's accepted range (Flash-Lite starts at 512).
 */
const EFFORT_BUDGET: Record<string, number> = { minimal: 512, low: 1024, medium: 8192, high: 24576 };
const BUDGET_MODELS = /(^|\/)gemini-(1|2)[.-]/;

function text(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).filter((p): p is Extract<ContentPart, { type: 'text' }> => p.type === 'text').map((p) => p.text).join('');
}

/** Consecutive turns of one role become one content: Gemini expects user and model turns to alternate. */
function pushMerged(contents: GeminiContent[], role: 'user' | 'model', parts: GeminiPart[]): void {
  const last = contents.at(-1);
  if (last && last.role === role) last.parts.push(...parts);
  else contents.push({ role, parts });
}

function buildContents(request: ChatCompletionRequest): { system: string[]; contents: GeminiContent[] } {
  const system: string[] = [];
  const contents: GeminiContent[] = [];
  // Gemini matches a functionResponse to its call by name: the name comes from the assistant turn that made the call.
  const callNames = new Map<string, string>();
  request.messages.forEach((message, index) => {
    if (message.role === 'system' || message.role === 'developer') {
      system.push(text(message.content));
      return;
    }
    for (const call of message.tool_calls ?? []) callNames.set(call.id, call.function.name);
    const name = message.role === 'tool' ? callNames.get(message.tool_call_id ?? '') ?? message.name : undefined;
    if (message.role === 'tool' && !name) {
      // Gemini needs the function's name, and only an earlier assistant turn (or the message's name) has it.
      throw validationError([{ path: `/messages/${index}/tool_call_id`, message: `answers no tool call of an earlier assistant message (${JSON.stringify(message.tool_call_id ?? null)})` }]);
    }
    pushMerged(contents, message.role === 'assistant' ? 'model' : 'user', geminiMessageParts(message, name, index));
  });
  return { system, contents };
}

function functionDeclaration(tool: FunctionTool): Record<string, unknown> {
  const { name, description, parameters } = tool.function;
  // parametersJsonSchema takes the caller's JSON Schema as is; `parameters` would need the OpenAPI subset.
  return { name, ...(description ? { description } : {}), ...(parameters ? { parametersJsonSchema: parameters } : {}) };
}

/**
 * web_search and search_grounding are both Google Search grounding; code_execution is the code tool. Others
 * are refused here too: a host serving other model families (Vertex AI) may declare more than Gemini has.
 */
function nativeTools(tools: BuiltInTool[], provider: string): Array<Record<string, unknown>> {
  const other = tools.filter((t) => !['web_search', 'search_grounding', 'code_execution'].includes(t.built_in)).map((t) => t.built_in);
  if (other.length > 0) {
    throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${provider} has no Gemini equivalent of the built-in tool ${other.join(', ')}`, { provider, tools: other });
  }
  const native: Array<Record<string, unknown>> = [];
  const search = tools.find((t) => t.built_in === 'web_search' || t.built_in === 'search_grounding');
  if (search) native.push({ googleSearch: search.config ?? {} });
  const code = tools.find((t) => t.built_in === 'code_execution');
  if (code) native.push({ codeExecution: code.config ?? {} });
  return native;
}

function toolConfig(choice: unknown): Record<string, unknown> | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  const name = (choice as { function?: { name?: string } }).function?.name;
  return name ? { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [name] } } : undefined;
}

function thinkingConfig(request: ChatCompletionRequest, model: string): Record<string, unknown> | undefined {
  const { reasoning } = request;
  const effort = request.reasoning_effort ?? reasoning?.effort;
  const config: Record<string, unknown> = {};
  if (reasoning?.budget_tokens !== undefined) config.thinkingBudget = reasoning.budget_tokens;
  else if (effort && BUDGET_MODELS.test(model)) config.thinkingBudget = EFFORT_BUDGET[effort] ?? EFFORT_BUDGET.medium;
  else if (effort) config.thinkingLevel = effort;
  // Asked-for reasoning is shown (as reasoning_content, never as content) unless the caller excludes it.
  if (Object.keys(config).length > 0 || reasoning) config.includeThoughts = reasoning?.exclude_from_output !== true;
  return Object.keys(config).length > 0 ? config : undefined;
}

function generationConfig(request: ChatCompletionRequest, model: string): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  const set = (key: string, value: unknown) => {
    if (value !== undefined && value !== null) config[key] = value;
  };
  set('temperature', request.temperature);
  set('topP', request.top_p);
  set('maxOutputTokens', request.max_completion_tokens ?? request.max_tokens);
  if (request.stop !== undefined && request.stop !== null) config.stopSequences = typeof request.stop === 'string' ? [request.stop] : request.stop;
  if ((request.n ?? 1) > 1) config.candidateCount = request.n;
  set('seed', request.seed);
  set('presencePenalty', request.presence_penalty);
  set('frequencyPenalty', request.frequency_penalty);
  if (request.logprobs) {
    config.responseLogprobs = true;
    set('logprobs', request.top_logprobs);
  }
  const format = request.response_format;
  if (format?.type === 'json_object' || format?.type === 'json_schema') config.responseMimeType = 'application/json';
  if (format?.type === 'json_schema') {
    const { name, schema } = (format.json_schema ?? {}) as { name?: string; schema?: Record<string, unknown> };
    // Gemini's schema has no name; the JSON Schema title carries it (unless the schema has its own).
    config.responseJsonSchema = { ...(name ? { title: name } : {}), ...(schema ?? {}) };
  }
  set('thinkingConfig', thinkingConfig(request, model));
  return config;
}

export function geminiRequestBody(request: ChatCompletionRequest, model: string, provider: string): Record<string, unknown> {
  if (request.logit_bias && Object.keys(request.logit_bias).length > 0) {
    throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${provider} does not support logit_bias`, { provider, parameter: 'logit_bias' });
  }
  const { system, contents } = buildContents(request);
  const body: Record<string, unknown> = { contents };
  if (system.length > 0) body.systemInstruction = { parts: system.map((s) => ({ text: s })) };
  const tools = request.tools ?? [];
  const functions = tools.filter((t): t is FunctionTool => t.type === 'function');
  const geminiTools = [
    ...(functions.length > 0 ? [{ functionDeclarations: functions.map(functionDeclaration) }] : []),
    ...nativeTools(tools.filter((t): t is BuiltInTool => t.type === 'built_in'), provider),
  ];
  if (geminiTools.length > 0) body.tools = geminiTools;
  const config = functions.length > 0 ? toolConfig(request.tool_choice) : undefined;
  if (config) body.toolConfig = config;
  const generation = generationConfig(request, model);
  if (Object.keys(generation).length > 0) body.generationConfig = generation;
  return body;
}
