/**
 * `aigw/provider`: everything a provider package imports: the translator contract, the canonical types it
 * translates, and the helpers that turn an upstream's errors into the gateway's. See docs/adding-a-provider.md.
 */
export { defineProvider, PROVIDER_API_VERSION } from '../dispatch/provider.ts';
export type {
  BatchCounts, BatchEndpoint, BatchesTranslator, BatchLine, BatchResultLine, BatchStatus, BatchStorageIO, BatchSubmitPlan, ProviderBatch,
  BuiltInToolName, ChatCapability, ChatStreamDecoder, ChatTranslator, CompletionTranslator, EmbeddingsTranslator,
  FilePurpose, FilesTranslator, FileUploadInfo, FileUploadPlan, PartsUploadPlan, UploadAnswer, UploadedFile, UploadPart,
  ModalityCapability, ProviderCapabilities, ProviderDefinition, ProviderIO, ProviderTarget, RerankTranslator, ResponsesCapability, ResponsesTranslator,
  StreamEvent, StreamFormat, UpstreamMethod, UpstreamRequest,
  AudioUploadPlan, FollowUp, SpeechTranslator, TranscriptionTask, TranscriptionTranslator,
  ImageCapability, ImageTranslator, VideoTranslator,
  RealtimeEventUsage, RealtimeHook, RealtimeSessionSettings,
} from '../dispatch/provider.ts';
export { transportError, upstreamStatusError, type UpstreamErrorDetails } from '../dispatch/upstream-errors.ts';
export { createError, GatewayError, type ErrorCode } from '../errors.ts';
export type {
  ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ChatMessage, ContentPart, FinishReason, ToolCall, Usage,
} from '../canonical/chat.ts';
export type { LegacyCompletionRequest } from '../canonical/completion.ts';
export type { EmbeddingsRequest, EmbeddingsResult } from '../canonical/embeddings.ts';
export type { RerankRequest, RerankResult } from '../canonical/rerank.ts';
export type {
  AudioInput, AudioUsage, SpeechFormat, SpeechRequest, TranscriptionFormat, TranscriptionRequest, TranscriptionResult, TranscriptSegment,
} from '../canonical/audio.ts';
export type { ImageAnswer, ImageRequest, ImageResponseFormat, ProviderImage } from '../canonical/image.ts';
export type { VideoRequest, VideoStatus, VideoTaskState } from '../canonical/video.ts';
export { formBody } from '../dispatch/multipart.ts';
export type { JsonSchema } from '../json-schema.ts';
