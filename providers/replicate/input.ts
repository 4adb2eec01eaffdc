/**
 * Canonical chat -> a Replicate prediction's `input`. Replicate's language models take one `prompt` (and a
 * `system_prompt`) and wrap it in their own chat template, so the history is rendered as text:
 *
 * - system and developer messages, joined by blank lines, become `system_prompt`;
 * - a single user message is the `prompt` as it is;
 * - a longer conversation becomes a transcript, one `User: ...` / `Assistant: ...` paragraph per turn, ending
 *   with `Assistant:` for the model to continue. Tool turns that arrive in history render as `Tool: ...`, and an
 *   assistant's tool calls as `[called name(arguments)]`.
 */
import type { ChatCompletionRequest, ChatMessage } from '../../core/canonical/chat.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';

export interface ReplicateOptions {
  waitSeconds?: number;
  pollIntervalMs?: number;
  maxPollIntervalMs?: number;
  maxTokensField?: 'max_tokens' | 'max_new_tokens';
  input?: Record<string, unknown>;
  modelInput?: Record<string, Record<string, unknown>>;
}

const LABEL: Record<string, string> = { user: 'User', assistant: 'Assistant', tool: 'Tool' };

function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('');
}

function turnText(m: ChatMessage): string {
  const calls = (m.tool_calls ?? []).map((c) => `[called ${c.function.name}(${c.function.arguments})]`);
  return [textOf(m.content), ...calls].filter((t) => t !== '').join('\n');
}

export function renderPrompt(messages: ChatMessage[]): { prompt: string; system_prompt?: string } {
  const system = messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => textOf(m.content));
  const turns = messages.filter((m) => m.role !== 'system' && m.role !== 'developer');
  const prompt = turns.length === 1 && turns[0]!.role === 'user'
    ? textOf(turns[0]!.content)
    : [...turns.map((m) => `${LABEL[m.role]}: ${turnText(m)}`), 'Assistant:'].join('\n\n');
  return system.length > 0 ? { prompt, system_prompt: system.join('\n\n') } : { prompt };
}

export function predictionInput(request: ChatCompletionRequest, target: ProviderTarget): Record<string, unknown> {
  const options = target.options as ReplicateOptions;
  const input: Record<string, unknown> = { ...(options.input ?? {}), ...renderPrompt(request.messages) };
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (maxTokens !== undefined) input[options.maxTokensField ?? 'max_tokens'] = maxTokens;
  if (request.temperature !== undefined) input.temperature = request.temperature;
  if (request.top_p !== undefined) input.top_p = request.top_p;
  // Replicate's language models take their stop sequences as one comma-separated string.
  if (request.stop !== undefined) input.stop_sequences = (typeof request.stop === 'string' ? [request.stop] : request.stop).join(',');
  if (request.seed !== undefined) input.seed = request.seed;
  if (request.presence_penalty !== undefined) input.presence_penalty = request.presence_penalty;
  if (request.frequency_penalty !== undefined) input.frequency_penalty = request.frequency_penalty;
  return input;
}
