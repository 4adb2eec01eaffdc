import type { CanonicalSpeechRequest, CanonicalTranscriptionRequest, SpeechResult, TranscriptionResult } from './audio.ts';
import type { LegacyCompletionFields } from './completion.ts';
import type { CanonicalImageRequest, ImageResult } from './image.ts';
import type { CanonicalVideoRequest, VideoJob } from './video.ts';
import type { CanonicalEmbeddingsRequest, EmbeddingsResult } from './embeddings.ts';
import type { CanonicalRerankRequest, RerankResult } from './rerank.ts';
import type { NativeResponsesRequest } from './responses-native.ts';

/**
 * The canonical chat format: the OpenAI chat-completions shape, which most providers speak. Every ingress
 * translates into it and every translator translates out of it; plugins only ever see these types.
 */
export type Role = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface TextPart { type: 'text'; text: string }
export interface ImagePart { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }
/**
 * A file: `file_id` names a gateway file (`file-<uuid>`, POST /v1/files), which the dispatcher replaces with the
 * provider's own id for the target it calls; or the bytes inline as a base64 data URL in `file_data`.
 */
export interface FilePart { type: 'file'; file: { file_id?: string; file_data?: string; filename?: string } }
export type ContentPart = TextPart | ImagePart | FilePart;

/**
 * What a file part's `file_id` must look like: a gateway id. A provider's own id is refused, since it would
 * bypass the registry: no tenant, expiry or provider check, and any file of the gateway's upstream account
 * (another tenant's, say) could be named.
 */
export const GATEWAY_FILE_ID_PATTERN = '^file-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: Role;
  content: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}

export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

export interface BuiltInTool {
  type: 'built_in';
  built_in: 'file_search' | 'web_search' | 'code_execution' | 'computer_use' | 'search_grounding';
  config?: Record<string, unknown>;
}

export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  stop?: string | string[];
  n?: number;
  tools?: Array<FunctionTool | BuiltInTool>;
  tool_choice?: unknown;
  response_format?: { type: 'text' | 'json_object' | 'json_schema'; json_schema?: Record<string, unknown> };
  reasoning_effort?: 'minimal' | 'low' | 'medium' | 'high';
  reasoning?: { effort?: string; budget_tokens?: number; exclude_from_output?: boolean };
  cache_control?: { cache_prefix?: boolean; ttl_seconds?: number };
  seed?: number;
  user?: string;
  frequency_penalty?: number;
  presence_penalty?: number;
  logprobs?: boolean;
  top_logprobs?: number;
  logit_bias?: Record<string, number>;
  /** Parameters the gateway does not interpret are kept and passed to providers that speak this format. */
  [extra: string]: unknown;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: { role: 'assistant'; content: string | null; tool_calls?: ToolCall[]; refusal?: string | null };
    finish_reason: FinishReason | null;
    logprobs?: unknown;
  }>;
  usage?: Usage;
  system_fingerprint?: string | null;
  [extra: string]: unknown;
}

export interface ChunkToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: { role?: 'assistant'; content?: string | null; tool_calls?: ChunkToolCallDelta[]; refusal?: string | null };
    finish_reason: FinishReason | null;
    logprobs?: unknown;
  }>;
  /** Present on the last chunk of every canonical stream when the provider reported usage. */
  usage?: Usage | null;
  [extra: string]: unknown;
}

/** The modalities a canonical request can name; translators declare which they support. */
export type Modality =
  | 'chat' | 'completion' | 'embeddings' | 'rerank' | 'transcription' | 'translation' | 'speech' | 'image' | 'video';

/** What an ingress hands to the pipeline: the canonical body plus what the caller asked of the answer. */
export interface CanonicalChatRequest {
  modality: 'chat';
  model: string;
  stream: boolean;
  /** The caller asked for the usage chunk at the end of the stream (stream_options.include_usage). */
  includeUsage: boolean;
  body: ChatCompletionRequest;
  /** A legacy completion's prompt and fields (POST /v1/completions with `prompt`): see completion.ts. */
  legacy?: LegacyCompletionFields;
  /**
   * Only this provider's targets of the model serve the request (a Responses request's `provider`, or the
   * provider of the response it continues); the model's routing order applies among them.
   */
  provider?: string;
  /**
   * A Responses request pinned to a provider with a native Responses API: the body that API takes (see
   * responses-native.ts). Targets whose provider has one get it; `body` stays the chat view, for the plugins.
   */
  native?: NativeResponsesRequest;
}

/** What an ingress hands to the pipeline, by modality: `modality` tells the dispatcher which translator serves it. */
export type CanonicalRequest = CanonicalChatRequest | CanonicalEmbeddingsRequest | CanonicalRerankRequest | CanonicalTranscriptionRequest | CanonicalSpeechRequest
  | CanonicalImageRequest | CanonicalVideoRequest;

/** The chat request of a canonical request that must be one (the chat ingresses, chat-only estimates). */
export function chatRequestOf(request: CanonicalRequest): CanonicalChatRequest {
  if (request.modality !== 'chat') throw new Error(`expected a chat request, got ${request.modality}`);
  return request;
}

/** The chat answer of a result that must be one (the chat ingresses). */
export function chatResultOf(result: CanonicalResult): ChatCompletion {
  if (result.object !== 'chat.completion') throw new Error(`expected a chat completion, got ${result.object}`);
  return result;
}

/** The canonical answer of a non-streamed call, by modality; every one may carry usage for the plugins. */
export type CanonicalResult = ChatCompletion | EmbeddingsResult | RerankResult | TranscriptionResult | SpeechResult | ImageResult | VideoJob;
