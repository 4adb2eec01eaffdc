/**
 * The conformance targets of the OpenAI-compatible catalogue: per provider, its wire's documented
 * differences, the base URL path it is called under, and the fixtures it cannot serve (each with the reason;
 * test/providers/openai-compatible.test.ts proves the gateway refuses them before any I/O).
 */
import { CATALOGUE } from '../../providers/openai-compatible/catalogue.ts';
import { compatibleProviderBySlug } from '../../providers/openai-compatible/index.ts';
import type { ConformanceTarget } from './kit.ts';
import type { ModalityTarget } from './modalities.ts';
import { openAiEmbeddingsWire, type OpenAiEmbeddingsStyle } from './wires/openai-embeddings.ts';
import { compatibleWire, type CompatibleWireStyle } from './wires/openai-compatible.ts';

type Style = Omit<CompatibleWireStyle, 'path'>;

const NO_TOOLS = 'the provider has no function calling: requests with tools are refused';
const NO_VISION = 'the provider serves no image input: image parts are refused';
const NO_JSON_SCHEMA = 'the provider has json_object only: json_schema is refused';

/** What each provider's wire does differently from OpenAI's, from its documentation. */
export const COMPATIBLE_WIRES: Record<string, Style & { without?: Record<string, string> }> = {
  mistral: {
    streamUsage: 'final-chunk', mistral: true, error: 'mistral',
    accepts: ['model', 'messages', 'temperature', 'top_p', 'max_tokens', 'stream', 'stop', 'random_seed', 'response_format', 'tools', 'tool_choice',
      'presence_penalty', 'frequency_penalty', 'n', 'prediction', 'parallel_tool_calls', 'prompt_mode', 'safe_prompt', 'metadata'],
  },
  groq: { streamUsage: 'x_groq', rejects: ['logprobs', 'logit_bias', 'top_logprobs'] },
  'together-ai': { streamUsage: 'final-chunk', finish: { stop: 'eos' } },
  'fireworks-ai': { streamUsage: 'asked-chunk' },
  deepseek: {
    streamUsage: 'asked-chunk', reasoningContent: 'The user wants a short answer.',
    without: { 'an image': NO_VISION, 'a json_schema response format': NO_JSON_SCHEMA },
  },
  xai: { streamUsage: 'asked-chunk' },
  perplexity: {
    streamUsage: 'every-chunk', rejects: ['tools', 'stop'], extra: { citations: ['https://example.com/a'] },
    without: {
      'a tool call': NO_TOOLS, 'parallel tool calls': NO_TOOLS, 'a named tool choice': NO_TOOLS, 'a tool result turn': NO_TOOLS,
      'stop, max_tokens and temperature': 'Sonar has no stop sequences: stop is refused',
    },
  },
  openrouter: { streamUsage: 'asked-chunk' },
  cerebras: { streamUsage: 'asked-chunk', without: { 'an image': NO_VISION } },
  sambanova: { streamUsage: 'asked-chunk' },
  deepinfra: { streamUsage: 'asked-chunk' },
  nebius: { streamUsage: 'asked-chunk' },
  'novita-ai': { streamUsage: 'asked-chunk' },
  hyperbolic: { streamUsage: 'asked-chunk' },
  volcengine: { streamUsage: 'asked-chunk' },
  nscale: { streamUsage: 'asked-chunk' },
  'featherless-ai': { streamUsage: 'asked-chunk', without: { 'an image': NO_VISION } },
  moonshot: { streamUsage: 'in-choice' },
  zhipu: {
    streamUsage: 'final-chunk',
    without: {
      'parallel tool calls': 'tool_choice is auto only: required is refused',
      'a named tool choice': 'tool_choice is auto only: a named function is refused',
    },
  },
  dashscope: { streamUsage: 'asked-chunk' },
  siliconflow: { streamUsage: 'asked-chunk' },
  upstage: { streamUsage: 'asked-chunk', without: { 'an image': NO_VISION } },
  ai21: { streamUsage: 'final-chunk', without: { 'an image': NO_VISION, 'a json_schema response format': NO_JSON_SCHEMA } },
  'nvidia-nim': { streamUsage: 'asked-chunk' },
  'github-models': { streamUsage: 'asked-chunk' },
  'workers-ai': { streamUsage: 'asked-chunk', error: 'cloudflare', without: { 'an image': NO_VISION } },
  huggingface: { streamUsage: 'asked-chunk', error: 'string' },
  ollama: { streamUsage: 'asked-chunk', noAuth: true },
  vllm: { streamUsage: 'asked-chunk' },
  databricks: { streamUsage: 'final-chunk', error: 'databricks' },
};

/** The path part of a provider's real base URL (placeholders filled), so the fake is called the same way. */
export function basePath(slug: string): string {
  const entry = CATALOGUE.find((e) => e.slug === slug)!;
  const url = (entry.defaultBaseUrl ?? entry.baseUrlTemplate!).replace(/\{[a-z]+\}/g, 'placeholder');
  return new URL(url).pathname.replace(/\/$/, '');
}

export function compatibleTarget(slug: string): ConformanceTarget {
  const { without, ...style } = COMPATIBLE_WIRES[slug]!;
  const prefix = basePath(slug);
  const credential = `sk-conformance-${slug}`;
  return {
    provider: compatibleProviderBySlug(slug),
    wire: compatibleWire({ ...style, path: `${prefix}/chat/completions` }),
    credential,
    providerBlock: (baseUrl) => `baseUrl: ${baseUrl}${prefix}${style.noAuth ? '' : `\napiKey: ${credential}`}`,
    ...(style.mistral ? { ignore: ['toolCallIds' as const] } : {}),
    ...(without ? { without } : {}),
  };
}

/** Every chat slug of the catalogue, in catalogue order. */
export const COMPATIBLE_SLUGS: string[] = CATALOGUE.map((e) => e.slug);

/**
 * What each provider's embeddings wire does differently from OpenAI's, from its documentation, and an upstream
 * model of it that takes `dimensions` (null: none does).
 */
export const COMPATIBLE_EMBEDDINGS: Record<string, { style: Omit<OpenAiEmbeddingsStyle, 'path'>; dimensionsModel: string | null }> = {
  mistral: { style: { dimensionsField: 'output_dimension', rejects: ['user', 'dimensions'] }, dimensionsModel: 'codestral-embed' },
  'together-ai': { style: { floatOnly: true }, dimensionsModel: null },
  'fireworks-ai': { style: { floatOnly: true }, dimensionsModel: 'nomic-ai/nomic-embed-text-v1.5' },
  openrouter: { style: {}, dimensionsModel: 'openai/text-embedding-3-small' },
  deepinfra: { style: {}, dimensionsModel: 'Qwen/Qwen3-Embedding-8B' },
  nebius: { style: { floatOnly: true }, dimensionsModel: null },
  volcengine: { style: {}, dimensionsModel: null },
  zhipu: { style: { floatOnly: true }, dimensionsModel: 'embedding-3' },
  dashscope: { style: { floatOnly: true }, dimensionsModel: 'text-embedding-v4' },
  siliconflow: { style: {}, dimensionsModel: 'Qwen/Qwen3-Embedding-8B' },
  upstage: { style: { floatOnly: true }, dimensionsModel: null },
  'nvidia-nim': { style: { requires: { input_type: 'query', truncate: 'NONE' } }, dimensionsModel: 'nvidia/llama-3.2-nv-embedqa-1b-v2' },
  'github-models': { style: {}, dimensionsModel: 'openai/text-embedding-3-small' },
  'workers-ai': { style: { floatOnly: true }, dimensionsModel: null },
  ollama: { style: { floatOnly: true }, dimensionsModel: null },
  vllm: { style: {}, dimensionsModel: 'Qwen/Qwen3-Embedding-0.6B' },
  databricks: { style: { floatOnly: true }, dimensionsModel: null },
};

export function compatibleModalityTarget(slug: string): ModalityTarget {
  const { style, dimensionsModel } = COMPATIBLE_EMBEDDINGS[slug]!;
  const chatStyle = COMPATIBLE_WIRES[slug]!;
  const prefix = basePath(slug);
  const credential = `sk-conformance-${slug}`;
  const chatWire = compatibleWire({ ...chatStyle, path: `${prefix}/chat/completions` });
  return {
    provider: compatibleProviderBySlug(slug),
    credential,
    providerBlock: (baseUrl) => `baseUrl: ${baseUrl}${prefix}${chatStyle.noAuth ? '' : `\napiKey: ${credential}`}`,
    embeddings: {
      wire: openAiEmbeddingsWire({ ...style, path: `${prefix}/embeddings`, errorBody: chatWire.errorBody, assertAuth: chatWire.assertAuth }),
      dimensionsModel,
    },
  };
}

/** Every slug of the catalogue with embeddings, in catalogue order. */
export const COMPATIBLE_EMBEDDINGS_SLUGS: string[] = CATALOGUE.filter((e) => e.embeddings).map((e) => e.slug);
