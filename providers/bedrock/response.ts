/** A Converse answer -> a canonical chat.completion; the stop reason and usage mappings streams share. */
import { randomUUID } from 'node:crypto';
import type { ChatCompletion, ChatCompletionRequest, FinishReason, ToolCall, Usage } from '../../core/canonical/chat.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { malformed } from './errors.ts';
import { jsonAnswerTool } from './request.ts';

export interface ConverseUsage {
  inputTokens?: unknown;
  outputTokens?: unknown;
  cacheReadInputTokens?: unknown;
  cacheWriteInputTokens?: unknown;
}

interface ConverseBlock {
  text?: unknown;
  toolUse?: { toolUseId?: unknown; name?: unknown; input?: unknown };
}

const STOP: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

export function finishReason(stopReason: unknown): FinishReason {
  return (typeof stopReason === 'string' && STOP[stopReason]) || 'stop';
}

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** Bedrock counts cached input apart from inputTokens; OpenAI's prompt_tokens include it. */
export function usageOf(usage: ConverseUsage | undefined): Usage | undefined {
  if (!usage || typeof usage !== 'object' || typeof usage.inputTokens !== 'number' || typeof usage.outputTokens !== 'number') return undefined;
  const cached = count(usage.cacheReadInputTokens);
  const prompt = usage.inputTokens + cached + count(usage.cacheWriteInputTokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: usage.outputTokens,
    total_tokens: prompt + usage.outputTokens,
    ...(cached > 0 ? { prompt_tokens_details: { cached_tokens: cached } } : {}),
  };
}

export const completionId = () => `chatcmpl-${randomUUID()}`;

/** Reasoning blocks are not part of the canonical message: only text and tool calls are returned. */
export function fromConverse(body: unknown, target: ProviderTarget, request: ChatCompletionRequest): ChatCompletion {
  const answer = body as { output?: { message?: { content?: unknown } }; stopReason?: unknown; usage?: ConverseUsage } | null;
  const content = answer?.output?.message?.content;
  if (!Array.isArray(content)) throw malformed(target, 'Converse answer (no output.message.content)');
  const jsonTool = jsonAnswerTool(request)?.name;
  let text = '';
  let jsonText: string | undefined;
  const toolCalls: ToolCall[] = [];
  for (const block of content as ConverseBlock[]) {
    if (typeof block?.text === 'string') {
      text += block.text;
    } else if (block?.toolUse) {
      const { toolUseId, name, input } = block.toolUse;
      if (typeof toolUseId !== 'string' || typeof name !== 'string') throw malformed(target, 'toolUse block');
      if (name === jsonTool) jsonText = JSON.stringify(input ?? {});
      else toolCalls.push({ id: toolUseId, type: 'function', function: { name, arguments: JSON.stringify(input ?? {}) } });
    }
  }
  let finish = finishReason(answer!.stopReason);
  // The emulated JSON answer is the message itself, and the turn ended there.
  if (jsonText !== undefined) {
    text = jsonText;
    if (finish === 'tool_calls' && toolCalls.length === 0) finish = 'stop';
  }
  const usage = usageOf(answer!.usage);
  return {
    id: completionId(),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: target.upstreamModel,
    choices: [{
      index: 0,
      message: { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
      finish_reason: finish,
      logprobs: null,
    }],
    ...(usage ? { usage } : {}),
  };
}
