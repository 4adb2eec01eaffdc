/** Cohere v2 answers -> canonical: finish reasons, usage, the message's text and tool calls. */
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../core/canonical/chat.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';

export function malformed(target: ProviderTarget, what: string): GatewayError {
  return new GatewayError('UPSTREAM_ERROR', `${target.slug} returned a malformed ${what}`, { provider: target.slug });
}

/**
 * Cohere's finish reasons. ERROR and TIMEOUT are failures of the generation, not endings: the caller gets an
 * error rather than a truncated answer that looks complete. ERROR_TOXIC (older models) is a content filter.
 */
export function finishReason(raw: unknown, hasToolCalls: boolean, target: ProviderTarget): FinishReason {
  switch (raw) {
    case 'COMPLETE':
    case 'STOP_SEQUENCE':
      return hasToolCalls ? 'tool_calls' : 'stop';
    case 'MAX_TOKENS':
    case 'ERROR_LIMIT':
      return 'length';
    case 'TOOL_CALL':
      return 'tool_calls';
    case 'ERROR_TOXIC':
      return 'content_filter';
    case 'ERROR':
      throw new GatewayError('UPSTREAM_ERROR', `${target.slug}: the generation failed (finish_reason ERROR)`, { provider: target.slug, upstreamError: { finish_reason: raw } });
    case 'TIMEOUT':
      throw new GatewayError('UPSTREAM_TIMEOUT', `${target.slug}: the generation timed out (finish_reason TIMEOUT)`, { provider: target.slug, upstreamError: { finish_reason: raw } });
    default:
      return hasToolCalls ? 'tool_calls' : 'stop';
  }
}

type Counts = { input_tokens?: unknown; output_tokens?: unknown };

/**
 * Cohere reports billed_units (what the account is charged for) and tokens (everything the model read,
 * its own prompt template included). Usage feeds budgets and cost, so the billed counts win; tokens are the
 * fallback for deployments that bill nothing.
 */
export function usageOf(usage: unknown): Usage | undefined {
  const u = usage as { billed_units?: Counts; tokens?: Counts } | null | undefined;
  const pick = (c: Counts | undefined) => (typeof c?.input_tokens === 'number' && typeof c.output_tokens === 'number'
    ? { input: c.input_tokens, output: c.output_tokens } : undefined);
  const counts = pick(u?.billed_units) ?? pick(u?.tokens);
  if (!counts) return undefined;
  return { prompt_tokens: counts.input, completion_tokens: counts.output, total_tokens: counts.input + counts.output };
}

interface CohereMessage {
  content?: Array<{ type?: string; text?: unknown }>;
  tool_calls?: Array<{ id?: unknown; function?: { name?: unknown; arguments?: unknown } }>;
}

export function cohereCompletion(body: unknown, target: ProviderTarget): ChatCompletion {
  const answer = body as { id?: unknown; finish_reason?: unknown; message?: CohereMessage; usage?: unknown } | null;
  const message = answer?.message;
  if (!answer || typeof answer !== 'object' || !message || typeof message !== 'object') throw malformed(target, 'chat answer');
  // Only text parts are the answer: thinking parts are reasoning, and tool_plan and citations are Cohere's own.
  const text = (Array.isArray(message.content) ? message.content : [])
    .map((p) => (p?.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('');
  const toolCalls: ToolCall[] = (Array.isArray(message.tool_calls) ? message.tool_calls : []).map((c, i) => {
    if (typeof c?.function?.name !== 'string') throw malformed(target, 'tool call');
    return {
      id: typeof c.id === 'string' ? c.id : `call_${i}`,
      type: 'function',
      function: { name: c.function.name, arguments: typeof c.function.arguments === 'string' ? c.function.arguments : '{}' },
    };
  });
  const completion: ChatCompletion = {
    id: typeof answer.id === 'string' ? answer.id : `chatcmpl-${target.slug}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: target.upstreamModel,
    choices: [{
      index: 0,
      message: { role: 'assistant', content: toolCalls.length > 0 && text === '' ? null : text, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
      finish_reason: finishReason(answer.finish_reason, toolCalls.length > 0, target),
    }],
  };
  const usage = usageOf(answer.usage);
  if (usage) completion.usage = usage;
  return completion;
}
