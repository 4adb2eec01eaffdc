/**
 * A Responses create body's parameters -> the canonical chat request's: function tools and the spec's built-ins as
 * chat has them, tool_choice, sampling, max_output_tokens -> max_tokens, reasoning as chat's `reasoning` object
 * (which every translator reads: effort, or an explicit budget).
 */
import type { BuiltInTool, ChatCompletionRequest, ChatMessage, FunctionTool } from './chat.ts';
import type { InputItem } from './responses.ts';

export type BuiltInName = BuiltInTool['built_in'];

export type ResponsesTool =
  | { type: 'function'; name: string; description?: string | null; parameters?: Record<string, unknown> | null; strict?: boolean | null }
  | { type: string; [config: string]: unknown };

export type ResponsesToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; name: string } | { type: 'function'; function: { name: string } };

export interface ResponsesCreateBody {
  model: string;
  input: string | InputItem[];
  provider?: string;
  previous_response_id?: string;
  instructions?: string | null;
  tools?: ResponsesTool[];
  tool_choice?: ResponsesToolChoice;
  temperature?: number;
  top_p?: number;
  max_output_tokens?: number;
  store?: boolean;
  stream?: boolean;
  reasoning?: { effort?: 'minimal' | 'low' | 'medium' | 'high'; budget_tokens?: number; summary?: string | null };
  metadata?: Record<string, string> | null;
}

function chatTool(tool: ResponsesTool, builtIns: Readonly<Record<string, BuiltInName>>): FunctionTool | BuiltInTool {
  if (tool.type === 'function') {
    const fn = tool as Extract<ResponsesTool, { type: 'function'; name: string }>;
    return {
      type: 'function',
      function: {
        name: fn.name,
        ...(fn.description ? { description: fn.description } : {}),
        ...(fn.parameters ? { parameters: fn.parameters } : {}),
      },
    };
  }
  const { type, ...config } = tool;
  const builtIn = builtIns[type]!;
  if (builtIn === 'file_search') {
    // The gateway's own file_search reads the chat form of its config (vectorStoreIds, topK).
    const { vector_store_ids: vectorStoreIds, max_num_results: topK } = config as { vector_store_ids: string[]; max_num_results?: number };
    return { type: 'built_in', built_in: builtIn, config: { vectorStoreIds, ...(topK !== undefined ? { topK } : {}) } };
  }
  return { type: 'built_in', built_in: builtIn, ...(Object.keys(config).length > 0 ? { config } : {}) };
}

function chatToolChoice(choice: ResponsesToolChoice): ChatCompletionRequest['tool_choice'] {
  if (typeof choice === 'string') return choice;
  const name = 'name' in choice ? choice.name : choice.function.name;
  return { type: 'function', function: { name } };
}

/** The canonical chat body of a create request, with its conversation already built. */
export function chatBodyOf(body: ResponsesCreateBody, messages: ChatMessage[], builtIns: Readonly<Record<string, BuiltInName>>): ChatCompletionRequest {
  const chat: ChatCompletionRequest = { model: body.model, messages };
  if (body.stream === true) chat.stream = true;
  if (body.temperature !== undefined) chat.temperature = body.temperature;
  if (body.top_p !== undefined) chat.top_p = body.top_p;
  if (body.max_output_tokens !== undefined) chat.max_tokens = body.max_output_tokens;
  if (body.tools && body.tools.length > 0) chat.tools = body.tools.map((tool) => chatTool(tool, builtIns));
  if (body.tool_choice !== undefined) chat.tool_choice = chatToolChoice(body.tool_choice);
  const reasoning = body.reasoning;
  if (reasoning) {
    chat.reasoning = reasoning.budget_tokens !== undefined ? { budget_tokens: reasoning.budget_tokens } : { effort: reasoning.effort! };
  }
  return chat;
}
