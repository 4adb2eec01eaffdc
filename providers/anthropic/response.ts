/** A Messages API answer -> a canonical chat completion; the stop-reason and usage mappings streams share. */
import type { ChatCompletion, ChatCompletionRequest, FinishReason, ToolCall, Usage } from '../../core/canonical/chat.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { anthropicEventError, malformed } from './errors.ts';
import { messagesSettings } from './options.ts';
import { jsonOutputTool } from './request.ts';

export interface MessagesUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/** input_tokens counts only what was neither read from nor written to the cache: the prompt is all three. */
export function canonicalUsage(usage: MessagesUsage): Usage {
  const read = usage.cache_read_input_tokens ?? 0;
  const prompt = (usage.input_tokens ?? 0) + read + (usage.cache_creation_input_tokens ?? 0);
  const completion = usage.output_tokens ?? 0;
  const result: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (usage.cache_read_input_tokens != null || usage.cache_creation_input_tokens != null) result.prompt_tokens_details = { cached_tokens: read };
  return result;
}

/**
 * stop_reason -> finish_reason. tool_use is `stop` when the only tool called was the response_format stand-in;
 * pause_turn (a server tool's long turn paused) ends this answer like end_turn.
 */
export function finishReason(stopReason: unknown, calledTools: boolean): FinishReason {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded': return 'length';
    case 'tool_use': return calledTools ? 'tool_calls' : 'stop';
    case 'refusal': return 'content_filter';
    default: return 'stop';
  }
}

/** Thinking is never content; it is shown as `reasoning_content` unless the caller excluded it. */
export function showsReasoning(request: ChatCompletionRequest): boolean {
  return request.reasoning?.exclude_from_output !== true;
}

type Block = { type?: unknown; text?: unknown; thinking?: unknown; id?: unknown; name?: unknown; input?: unknown };

export function parseMessagesResponse(body: unknown, target: ProviderTarget, request: ChatCompletionRequest): ChatCompletion {
  const message = body as { type?: unknown; id?: unknown; model?: unknown; content?: unknown; stop_reason?: unknown; usage?: MessagesUsage } | null;
  if (message?.type === 'error') throw anthropicEventError(target, message);
  if (!message || typeof message !== 'object' || !Array.isArray(message.content)) throw malformed(target, 'message');
  const json = jsonOutputTool(request, messagesSettings(target.options));
  let text = '';
  let reasoning = '';
  const toolCalls: ToolCall[] = [];
  for (const block of message.content as Block[]) {
    if (block?.type === 'text' && typeof block.text === 'string') text += block.text;
    else if (block?.type === 'thinking' && typeof block.thinking === 'string') reasoning += block.thinking;
    else if (block?.type === 'tool_use') {
      if (typeof block.name !== 'string' || typeof block.id !== 'string') throw malformed(target, 'tool_use block');
      const args = JSON.stringify(block.input ?? {});
      if (json && block.name === json.name) text += args;
      else toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: args } });
    }
    // Server tools' blocks (server_tool_use, web_search_tool_result, ...) were run by Anthropic: nothing to answer.
  }
  const out: ChatCompletion['choices'][number]['message'] & { reasoning_content?: string } = {
    role: 'assistant',
    content: text === '' && toolCalls.length > 0 ? null : text,
  };
  if (toolCalls.length > 0) out.tool_calls = toolCalls;
  if (reasoning !== '' && showsReasoning(request)) out.reasoning_content = reasoning;
  const completion: ChatCompletion = {
    id: typeof message.id === 'string' ? message.id : `msg-${target.slug}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof message.model === 'string' ? message.model : target.upstreamModel,
    choices: [{ index: 0, message: out, finish_reason: finishReason(message.stop_reason, toolCalls.length > 0) }],
  };
  if (message.usage && typeof message.usage === 'object') completion.usage = canonicalUsage(message.usage);
  return completion;
}
