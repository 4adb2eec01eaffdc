/**
 * Reasoning has no Converse field: each model family takes its own additionalModelRequestFields. Families
 * are told apart by the model id (`anthropic.claude-...`, `us.amazon.nova-2-...`); for other models, and
 * for inference-profile ARNs that do not name the model, reasoning is not sent.
 */
import type { ChatCompletionRequest } from '../../core/canonical/chat.ts';

type Effort = 'minimal' | 'low' | 'medium' | 'high';

/** Claude's thinking takes a token budget (at least 1024, below maxTokens). */
const CLAUDE_BUDGET: Record<Effort, number> = { minimal: 1024, low: 2048, medium: 8192, high: 16384 };

function effortOf(request: ChatCompletionRequest): Effort | undefined {
  const effort = request.reasoning?.effort ?? request.reasoning_effort;
  return effort === 'minimal' || effort === 'low' || effort === 'medium' || effort === 'high' ? effort : undefined;
}

/** Nova and gpt-oss know low / medium / high: the nearest for an effort or a budget. */
function levelOf(effort: Effort | undefined, budget: number | undefined): 'low' | 'medium' | 'high' {
  if (effort) return effort === 'minimal' ? 'low' : effort;
  return budget! <= CLAUDE_BUDGET.low ? 'low' : budget! <= CLAUDE_BUDGET.medium ? 'medium' : 'high';
}

export function reasoningFields(request: ChatCompletionRequest, modelId: string): Record<string, unknown> {
  const effort = effortOf(request);
  const budget = request.reasoning?.budget_tokens;
  if (effort === undefined && budget === undefined) return {};
  const model = modelId.toLowerCase();
  if (model.includes('anthropic.claude')) {
    return { thinking: { type: 'enabled', budget_tokens: budget ?? CLAUDE_BUDGET[effort!] } };
  }
  if (model.includes('amazon.nova')) {
    return { reasoningConfig: { type: 'enabled', maxReasoningEffort: levelOf(effort, budget) } };
  }
  if (model.includes('openai.gpt-oss')) return { reasoning_effort: levelOf(effort, budget) };
  return {};
}
