/**
 * The OpenTelemetry GenAI semantic conventions for one upstream call: what the request asked for and what
 * the answer said, as span attributes. Only names, numbers and ids: never a prompt, a completion, a key or a
 * header. gen_ai.provider.name is the current convention (it replaced gen_ai.system, which is not written).
 */
import type { CanonicalRequest, CanonicalResult, ChatCompletionChunk, Usage } from '../canonical/chat.ts';
import type { AttemptTarget } from './tracing-types.ts';

export type SpanAttributes = Record<string, string | number | string[]>;

export const GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
export const GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
export const GEN_AI_REQUEST_MAX_TOKENS = 'gen_ai.request.max_tokens';
export const GEN_AI_REQUEST_TEMPERATURE = 'gen_ai.request.temperature';
export const GEN_AI_REQUEST_TOP_P = 'gen_ai.request.top_p';
export const GEN_AI_RESPONSE_MODEL = 'gen_ai.response.model';
export const GEN_AI_RESPONSE_ID = 'gen_ai.response.id';
export const GEN_AI_RESPONSE_FINISH_REASONS = 'gen_ai.response.finish_reasons';
export const GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';

/** The convention's well-known provider names, where a slug differs; any other provider is named by its slug. */
const PROVIDER_NAMES: Readonly<Record<string, string>> = {
  'azure-openai': 'azure.ai.openai',
  'azure-ai': 'azure.ai.inference',
  bedrock: 'aws.bedrock',
  'vertex-ai': 'gcp.vertex_ai',
  gemini: 'gcp.gemini',
  mistral: 'mistral_ai',
  xai: 'x_ai',
  watsonx: 'ibm.watsonx.ai',
};

/**
 * gen_ai.operation.name: the convention's chat, text_completion and embeddings; the modalities it names no
 * operation for keep their own name (rerank, speech, transcription, translation, image, video).
 */
export function operationName(request: CanonicalRequest): string {
  if (request.modality === 'chat') return request.legacy ? 'text_completion' : 'chat';
  return request.modality;
}

export function requestAttributes(request: CanonicalRequest, target: AttemptTarget): SpanAttributes {
  const attributes: SpanAttributes = {
    [GEN_AI_OPERATION_NAME]: operationName(request),
    [GEN_AI_PROVIDER_NAME]: PROVIDER_NAMES[target.slug] ?? target.slug,
    [GEN_AI_REQUEST_MODEL]: target.upstreamModel,
  };
  if (request.modality === 'chat') {
    const { max_tokens: maxTokens, max_completion_tokens: maxCompletionTokens, temperature, top_p: topP } = request.body;
    const max = maxCompletionTokens ?? maxTokens;
    if (typeof max === 'number') attributes[GEN_AI_REQUEST_MAX_TOKENS] = max;
    if (typeof temperature === 'number') attributes[GEN_AI_REQUEST_TEMPERATURE] = temperature;
    if (typeof topP === 'number') attributes[GEN_AI_REQUEST_TOP_P] = topP;
  }
  return attributes;
}

function usageAttributes(usage: Usage | null | undefined, attributes: SpanAttributes): void {
  if (!usage) return;
  if (typeof usage.prompt_tokens === 'number') attributes[GEN_AI_USAGE_INPUT_TOKENS] = usage.prompt_tokens;
  if (typeof usage.completion_tokens === 'number') attributes[GEN_AI_USAGE_OUTPUT_TOKENS] = usage.completion_tokens;
}

/** What a whole answer says: its id, model, finish reasons and usage, as far as its modality has them. */
export function resultAttributes(result: CanonicalResult): SpanAttributes {
  const attributes: SpanAttributes = {};
  const fields = result as { id?: unknown; model?: unknown; usage?: Usage | null; choices?: Array<{ finish_reason?: unknown }> };
  if (typeof fields.id === 'string') attributes[GEN_AI_RESPONSE_ID] = fields.id;
  if (typeof fields.model === 'string') attributes[GEN_AI_RESPONSE_MODEL] = fields.model;
  if (Array.isArray(fields.choices)) {
    const reasons = fields.choices.flatMap((c) => (typeof c.finish_reason === 'string' ? [c.finish_reason] : []));
    if (reasons.length > 0) attributes[GEN_AI_RESPONSE_FINISH_REASONS] = reasons;
  }
  usageAttributes(fields.usage, attributes);
  return attributes;
}

/** Gathers a stream's attributes chunk by chunk; the last usage reported is the stream's. */
export class StreamAttributes {
  private id: string | undefined;
  private model: string | undefined;
  private usage: Usage | undefined;
  private readonly reasons = new Map<number, string>();

  note(chunk: ChatCompletionChunk): void {
    if (chunk.id) this.id ??= chunk.id;
    if (chunk.model) this.model ??= chunk.model;
    if (chunk.usage) this.usage = chunk.usage;
    for (const choice of chunk.choices) if (choice.finish_reason) this.reasons.set(choice.index, choice.finish_reason);
  }

  attributes(): SpanAttributes {
    const attributes: SpanAttributes = {};
    if (this.id) attributes[GEN_AI_RESPONSE_ID] = this.id;
    if (this.model) attributes[GEN_AI_RESPONSE_MODEL] = this.model;
    if (this.reasons.size > 0) attributes[GEN_AI_RESPONSE_FINISH_REASONS] = [...this.reasons.entries()].sort(([a], [b]) => a - b).map(([, r]) => r);
    usageAttributes(this.usage, attributes);
    return attributes;
  }
}
