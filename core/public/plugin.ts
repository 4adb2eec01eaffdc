/**
 * `aigw/plugin`: everything a plugin package imports. Small, typed, and free of the core's internals: services
 * are narrow interfaces, and this module's imports reach only the contract's own files (a test keeps it so).
 * See docs/writing-a-plugin.md.
 */
export { definePlugin, PLUGIN_API_VERSION } from '../pipeline/plugin.ts';
export type { EntryCheckContext, PluginCommand, PluginCommandContext, PluginDefinition, PluginErrorCode } from '../pipeline/plugin.ts';
export type { MeteredWork } from '../pipeline/metered.ts';
export type { EmbedCaller, Embedded, EmbeddingService, EmbedRequest } from '../pipeline/embed.ts';
export type { RetrievalQuery, RetrievalService, RetrievedChunk } from '../pipeline/retrieval.ts';
export type {
  Clock, IdentityService, LogFn, PluginDatabase, PluginKv, PluginLogger, PluginQueryable, PluginServices, Row,
} from '../pipeline/services.ts';
export type {
  GatewayContext, GatewayMiddleware, GatewayState, GuardVerdict, ResolvedTarget, ResponseStage, StreamOutcome, StreamStatus,
} from '../pipeline/context.ts';
export type { Caller, Credential, EffectivePolicy, RateLimits } from '../pipeline/caller.ts';
export { overriddenModel } from '../identity/policy.ts';
export { MAX_EMBED_INPUTS, type EmbedPurpose } from '../pipeline/embed.ts';
export type {
  AdminRequest, AdminRouteDescription, AdminScope, AdminWriteEvent, EndpointDescription, PluginAdminRoute, PluginEndpoint,
} from '../pipeline/routes.ts';
export { createSlot, type Slot } from '../pipeline/slot.ts';
export { defineKvOperation, type KvOperation, type MemoryKvAccess, type MemoryState } from '../store/kv-operation.ts';
export { BinaryCopyWriter, type CopyBinary, type CopyColumnType, type CopyValues } from '../store/copy-binary.ts';
export { createError, GatewayError, type ErrorCode, type ErrorEnvelope } from '../errors.ts';
export type {
  CanonicalRequest, CanonicalResult, ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ChatMessage, Modality, Usage,
} from '../canonical/chat.ts';
export type { EmbeddingsRequest, EmbeddingsResult } from '../canonical/embeddings.ts';
export type { RerankRequest, RerankResult } from '../canonical/rerank.ts';
export type { JsonSchema } from '../json-schema.ts';
export type { GatewayConfig, ModelConfig } from '../config/types.ts';
