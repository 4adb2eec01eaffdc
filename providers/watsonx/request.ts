/**
 * Canonical request -> watsonx.ai /text/chat body. The messages and tools are OpenAI-shaped; the model goes in
 * model_id, the project (or deployment space) in the body, and tool_choice is split in two: a mode in
 * tool_choice_option, a named function in tool_choice.
 */
import type { ChatCompletionRequest, ChatMessage, FunctionTool } from '../../core/canonical/chat.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';

export interface WatsonxOptions {
  region?: string;
  projectId?: string;
  spaceId?: string;
  version?: string;
  iamUrl?: string;
  timeLimitMs?: number;
}

/** System and tool turns take text only. */
const textOf = (content: ChatMessage['content']): string =>
  (typeof content === 'string' ? content : (content ?? []).map((p) => (p.type === 'text' ? p.text : '')).join(''));

function message(m: ChatMessage): Record<string, unknown> {
  if (m.role === 'system' || m.role === 'developer') return { role: 'system', content: textOf(m.content) };
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.tool_call_id ?? '', content: textOf(m.content) };
  const out: Record<string, unknown> = { role: m.role };
  // An assistant turn that only calls tools has no content at all (watsonx refuses null).
  if (m.content !== null && !(m.role === 'assistant' && m.content === '' && m.tool_calls?.length)) out.content = m.content;
  if (m.role === 'assistant' && m.tool_calls?.length) out.tool_calls = m.tool_calls;
  return out;
}

const PASSED = ['temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'seed', 'frequency_penalty', 'presence_penalty', 'logprobs', 'top_logprobs', 'n', 'logit_bias'] as const;

export function watsonxBody(request: ChatCompletionRequest, target: ProviderTarget): Record<string, unknown> {
  const options = target.options as WatsonxOptions;
  const body: Record<string, unknown> = { model_id: target.upstreamModel, messages: request.messages.map(message) };
  if (options.projectId) body.project_id = options.projectId;
  else if (options.spaceId) body.space_id = options.spaceId;
  for (const key of PASSED) if (request[key] !== undefined) body[key] = request[key];
  if (request.stop !== undefined) body.stop = typeof request.stop === 'string' ? [request.stop] : request.stop;
  const tools = (request.tools ?? []).filter((t): t is FunctionTool => t.type === 'function');
  const choice = request.tool_choice;
  // A tool choice without tools means nothing, and watsonx refuses it.
  if (tools.length > 0) {
    body.tools = tools;
    if (typeof choice === 'string') body.tool_choice_option = choice;
    else if (choice && typeof choice === 'object') body.tool_choice = choice;
  }
  const format = request.response_format;
  if (format && format.type !== 'text') body.response_format = format;
  // watsonx takes low / medium / high; the spec's "minimal" is its nearest, low.
  const effort = request.reasoning_effort ?? request.reasoning?.effort;
  if (effort) body.reasoning_effort = effort === 'minimal' ? 'low' : effort;
  if (options.timeLimitMs) body.time_limit = options.timeLimitMs;
  return body;
}
