/**
 * One line of a batch job's output: `{recordId, modelInput, modelOutput}`, or `{recordId, modelInput, error}` for a
 * record that failed. modelOutput is the body the model's API answers (InvokeModel jobs) or a Converse answer
 * (Converse jobs), so its usage takes as many shapes as Bedrock has model families.
 */
import type { Usage } from '../../core/canonical/chat.ts';
import type { BatchResultLine } from '../../core/dispatch/provider.ts';
import { canonicalUsage } from '../anthropic/response.ts';
import { usageOf } from './response.ts';

type Output = Record<string, unknown>;

const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0;

const tokens = (prompt: number, completion: number): Usage => ({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion });

/**
 * - Converse and Amazon Nova: `usage: {inputTokens, outputTokens, cacheReadInputTokens?, ...}`
 * - Anthropic Messages: `usage: {input_tokens, output_tokens, cache_*_input_tokens?}`
 * - Titan Text: `inputTextTokenCount` and `results[].tokenCount`; Titan Embeddings: `inputTextTokenCount` alone
 * - Meta Llama: `prompt_token_count` and `generation_token_count`
 * Any other (Mistral, Cohere, ...) reports no usage in its body: null.
 */
export function outputUsage(output: Output): Usage | null {
  const usage = output.usage as Record<string, unknown> | null | undefined;
  if (usage && typeof usage === 'object') {
    if ('inputTokens' in usage) return usageOf(usage) ?? null;
    if (isNumber(usage.input_tokens) && isNumber(usage.output_tokens)) return canonicalUsage(usage as Parameters<typeof canonicalUsage>[0]);
  }
  if (isNumber(output.inputTextTokenCount)) {
    const results = Array.isArray(output.results) ? output.results as Array<{ tokenCount?: unknown } | null> : [];
    return tokens(output.inputTextTokenCount, results.reduce((sum, r) => sum + (isNumber(r?.tokenCount) ? r.tokenCount : 0), 0));
  }
  if (isNumber(output.prompt_token_count) && isNumber(output.generation_token_count)) return tokens(output.prompt_token_count, output.generation_token_count);
  return null;
}

export function bedrockResultLine(line: unknown): BatchResultLine {
  const l = line as { modelOutput?: unknown; error?: unknown } | null;
  const raw = l?.modelOutput;
  const output = raw && typeof raw === 'object' && !Array.isArray(raw) ? raw as Output : null;
  return {
    ok: output !== null && (l!.error === undefined || l!.error === null),
    model: typeof output?.model === 'string' ? output.model : null,
    usage: output ? outputUsage(output) : null,
  };
}
