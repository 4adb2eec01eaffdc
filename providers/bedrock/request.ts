/**
 * Canonical (OpenAI-shaped) request -> a Converse request body. Converse has one top-level system, strictly
 * alternating user/assistant turns of content blocks, tool results inside user turns, and no JSON mode.
 */
import type { ChatCompletionRequest, ChatMessage, ContentPart, FunctionTool } from '../../core/canonical/chat.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { reasoningFields } from './reasoning.ts';

type Block = Record<string, unknown>;
export interface ConverseTurn { role: 'user' | 'assistant'; content: Block[] }

export interface ConverseRequest {
  messages: ConverseTurn[];
  system?: Array<{ text: string }>;
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  toolConfig?: { tools: Block[]; toolChoice?: Block };
  additionalModelRequestFields?: Record<string, unknown>;
}

/**
 * json_schema / json_object are emulated with a tool the model is made to call: its input is the answer,
 * returned as the message text. The description marks the tool (the conformance wire recognizes it by it).
 */
export const JSON_TOOL_DESCRIPTION = 'Structured answer: call this tool with the complete answer as its input.';

/** The emulated JSON-answer tool of a request, if it asks for JSON. */
export function jsonAnswerTool(request: ChatCompletionRequest): { name: string; schema: Record<string, unknown>; description: string } | null {
  const format = request.response_format;
  if (format?.type === 'json_object') return { name: 'json_answer', schema: { type: 'object' }, description: JSON_TOOL_DESCRIPTION };
  if (format?.type !== 'json_schema') return null;
  const spec = (format.json_schema ?? {}) as { name?: unknown; schema?: unknown; description?: unknown };
  return {
    name: typeof spec.name === 'string' && spec.name !== '' ? spec.name : 'json_answer',
    schema: spec.schema && typeof spec.schema === 'object' ? spec.schema as Record<string, unknown> : { type: 'object' },
    description: typeof spec.description === 'string' ? `${JSON_TOOL_DESCRIPTION} ${spec.description}` : JSON_TOOL_DESCRIPTION,
  };
}

const invalid = (path: string, message: string) => new GatewayError('VALIDATION_ERROR', message, [{ path, message }]);
const unsupported = (what: string, details: Record<string, unknown>) =>
  new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider bedrock does not support ${what}`, { provider: 'bedrock', ...details });

const FORMATS: Record<string, string> = { png: 'png', jpeg: 'jpeg', jpg: 'jpeg', gif: 'gif', webp: 'webp' };

/** Converse takes image bytes (or S3 locations), never URLs to fetch: only data: URLs can be passed on. */
function imageBlock(url: string, path: string): Block {
  const match = /^data:image\/([a-z]+);base64,(.*)$/is.exec(url);
  if (!match) throw unsupported('image URLs (send the image as a base64 data: URL)', { capability: 'vision', path });
  const format = FORMATS[match[1]!.toLowerCase()];
  if (!format) throw unsupported(`images of type image/${match[1]} (png, jpeg, gif, webp only)`, { capability: 'vision', path });
  return { image: { format, source: { bytes: match[2]! } } };
}

/** Converse rejects blank text blocks, so empty text is left out. */
function partBlocks(content: ChatMessage['content'], path: string, images: boolean): Block[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  return (content ?? []).flatMap((part: ContentPart, i) => {
    if (part.type === 'text') return part.text === '' ? [] : [{ text: part.text }];
    if (part.type === 'image_url' && images) return [imageBlock(part.image_url.url, `${path}/${i}/image_url/url`)];
    return [];
  });
}

const textOf = (content: ChatMessage['content']) =>
  typeof content === 'string' ? content : (content ?? []).flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');

function toolUse(call: NonNullable<ChatMessage['tool_calls']>[number], path: string): Block {
  let input: unknown = {};
  if (call.function.arguments.trim() !== '') {
    try {
      input = JSON.parse(call.function.arguments);
    } catch {
      throw invalid(`${path}/function/arguments`, 'tool call arguments must be JSON');
    }
  }
  return { toolUse: { toolUseId: call.id, name: call.function.name, input } };
}

/**
 * Tool results keep the caller's text as it is ({text}, not re-serialized {json}), and carry no `status`:
 * the canonical format has no error flag, and Bedrock accepts `status` from Claude and Nova models only.
 */
function toolResult(message: ChatMessage, path: string): Block {
  if (!message.tool_call_id) throw invalid(`${path}/tool_call_id`, 'a tool message needs tool_call_id');
  return { toolResult: { toolUseId: message.tool_call_id, content: partBlocks(message.content, `${path}/content`, true) } };
}

function conversation(messages: ChatMessage[]): { system: Array<{ text: string }>; turns: ConverseTurn[] } {
  const system: Array<{ text: string }> = [];
  const turns: ConverseTurn[] = [];
  // Converse wants strict alternation: consecutive same-role messages (tool results then user text) merge.
  const push = (role: ConverseTurn['role'], blocks: Block[]) => {
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  messages.forEach((m, i) => {
    const path = `/messages/${i}`;
    if (m.role === 'system' || m.role === 'developer') {
      const text = textOf(m.content);
      if (text !== '') system.push({ text });
    } else if (m.role === 'user') {
      push('user', partBlocks(m.content, `${path}/content`, true));
    } else if (m.role === 'assistant') {
      push('assistant', [...partBlocks(m.content, `${path}/content`, false), ...(m.tool_calls ?? []).map((c, j) => toolUse(c, `${path}/tool_calls/${j}`))]);
    } else if (m.role === 'tool') {
      push('user', [toolResult(m, path)]);
    }
  });
  return { system, turns };
}

function toolConfig(request: ChatCompletionRequest, turns: ConverseTurn[]): ConverseRequest['toolConfig'] {
  const functions = (request.tools ?? []).filter((t): t is FunctionTool => t.type === 'function');
  const json = jsonAnswerTool(request);
  const choice = request.tool_choice as string | { function?: { name?: string } } | undefined;
  const named = typeof choice === 'object' ? choice?.function?.name : undefined;
  if (json && functions.some((f) => f.function.name === json.name)) {
    throw invalid('/response_format/json_schema/name', `the JSON schema name "${json.name}" is also the name of a tool; rename one of them`);
  }
  // Converse requires toolConfig whenever the conversation holds tool blocks, so `none` can only drop the
  // tools of a conversation without any; with them it is best effort (tools offered, no choice forced).
  const history = turns.some((t) => t.content.some((b) => 'toolUse' in b || 'toolResult' in b));
  const offered = choice === 'none' && !history ? [] : functions;
  const tools: Block[] = offered.map((f) => ({
    toolSpec: {
      name: f.function.name,
      ...(f.function.description ? { description: f.function.description } : {}),
      inputSchema: { json: f.function.parameters ?? { type: 'object', properties: {} } },
    },
  }));
  if (json) tools.push({ toolSpec: { name: json.name, description: json.description, inputSchema: { json: json.schema } } });
  if (tools.length === 0) return undefined;
  let toolChoice: Block | undefined;
  if (named) toolChoice = { tool: { name: named } };
  // With JSON asked for, every answer is a tool call: a function's, or the JSON tool's (forced when alone).
  else if (json) toolChoice = offered.length === 0 ? { tool: { name: json.name } } : { any: {} };
  else if (choice === 'required') toolChoice = { any: {} };
  else if (choice === 'auto') toolChoice = { auto: {} };
  return { tools, ...(toolChoice ? { toolChoice } : {}) };
}

function inferenceConfig(request: ChatCompletionRequest): ConverseRequest['inferenceConfig'] {
  const config: NonNullable<ConverseRequest['inferenceConfig']> = {};
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (maxTokens !== undefined) config.maxTokens = maxTokens;
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.top_p !== undefined) config.topP = request.top_p;
  const stop = typeof request.stop === 'string' ? [request.stop] : request.stop ?? [];
  if (stop.length > 0) config.stopSequences = stop;
  return Object.keys(config).length > 0 ? config : undefined;
}

/**
 * The Converse body. Parameters Converse has no place for (seed, penalties, logprobs, logit_bias, user,
 * cache_control) are not sent: a model-specific one can go through options.additionalModelRequestFields.
 */
export function toConverse(request: ChatCompletionRequest, target: ProviderTarget): ConverseRequest {
  const { system, turns } = conversation(request.messages);
  const body: ConverseRequest = { messages: turns };
  if (system.length > 0) body.system = system;
  const inference = inferenceConfig(request);
  if (inference) body.inferenceConfig = inference;
  const tools = toolConfig(request, turns);
  if (tools) body.toolConfig = tools;
  const configured = target.options.additionalModelRequestFields as Record<string, unknown> | undefined;
  const additional = { ...(configured ?? {}), ...reasoningFields(request, target.upstreamModel) };
  if (Object.keys(additional).length > 0) body.additionalModelRequestFields = additional;
  return body;
}
