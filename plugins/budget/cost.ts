/**
 * What a request may cost before it runs (the reservation) and what it did cost (the settlement), in integer
 * micro-dollars, from the `pricing` of the model it is served with (after the caller's policy overrides).
 * Prices and rounding are the usage plugin's (core/usage/pricing.ts), so that counters rebuilt from usage records
 * match the counters requests kept.
 */
import type { ChatCompletionRequest, Usage } from '../../core/canonical/chat.ts';
import { estimatePromptTokens } from '../../core/canonical/estimate.ts';
import type { GatewayConfig, ModelConfig } from '../../core/config/types.ts';
import { allowsModel, overriddenModel, type EffectivePolicy } from '../../core/identity/policy.ts';
import { costUsd, toMicroUsd, type Pricing } from '../../core/usage/pricing.ts';

export type ModelPrice =
  /** Not a model this caller can use: routing refuses it, nothing to reserve. */
  | { kind: 'unroutable' }
  | { kind: 'unpriced'; modelId: string }
  | { kind: 'priced'; modelId: string; pricing: Pricing; model: ModelConfig };

export function modelPrice(config: GatewayConfig, policy: EffectivePolicy, requested: string): ModelPrice {
  const modelId = overriddenModel(policy, requested);
  const model = config.models.find((m) => m.id === modelId && m.enabled);
  if (!model || !allowsModel(policy, modelId)) return { kind: 'unroutable' };
  const pricing = model.pricing;
  if (costUsd(pricing, { prompt_tokens: 0, completion_tokens: 0 }) === null) return { kind: 'unpriced', modelId };
  return { kind: 'priced', modelId, pricing: pricing!, model };
}

export function costMicros(pricing: Pricing, usage: Pick<Usage, 'prompt_tokens' | 'completion_tokens' | 'prompt_tokens_details'>): number {
  return toMicroUsd(costUsd(pricing, usage) ?? 0);
}

/**
 * The reservation: the prompt as the gateway's tokenizer counts it (no cached tokens assumed), plus the most
 * completion tokens the request allows: max_completion_tokens, else max_tokens, else the model's
 * max_output_tokens, else `defaultCompletionTokens`; times n choices.
 */
export async function estimateMicros(price: Extract<ModelPrice, { kind: 'priced' }>, body: ChatCompletionRequest, defaultCompletionTokens: number): Promise<number> {
  const prompt = await estimatePromptTokens(body);
  const perChoice = body.max_completion_tokens ?? body.max_tokens ?? price.model.max_output_tokens ?? defaultCompletionTokens;
  const choices = typeof body.n === 'number' && body.n > 1 ? body.n : 1;
  return costMicros(price.pricing, { prompt_tokens: prompt, completion_tokens: perChoice * choices });
}
