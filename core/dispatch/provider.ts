/**
 * The provider contract: a translator between the canonical format and one provider's wire format.
 * Translators do no I/O; the dispatcher owns connections, timeouts, breakers and streaming.
 */
import type { RealtimeSessionSettings } from '../canonical/realtime.ts';
import type { JsonSchema } from '../json-schema.ts';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest } from '../canonical/chat.ts';
import type { LegacyCompletionRequest } from '../canonical/completion.ts';
import type { EmbeddingsRequest, EmbeddingsResult } from '../canonical/embeddings.ts';
import type { RerankRequest, RerankResult } from '../canonical/rerank.ts';
import type { SpeechRequest, TranscriptionRequest, TranscriptionResult } from '../canonical/audio.ts';
import type { ImageAnswer, ImageRequest } from '../canonical/image.ts';
import type { VideoRequest, VideoTaskState } from '../canonical/video.ts';
import type { GatewayError } from '../errors.ts';
import type { StreamEvent, StreamFormat } from '../streaming/events.ts';
import type { BatchesTranslator } from './provider-batches.ts';
import type { FilesTranslator } from './provider-files.ts';
import type { ResponsesCapability, ResponsesTranslator } from './provider-responses.ts';

export type { BatchCounts, BatchEndpoint, BatchesTranslator, BatchLine, BatchResultLine, BatchStatus, BatchStorageIO, BatchSubmitPlan, ProviderBatch } from './provider-batches.ts';
export type { ResponsesCapability, ResponsesTranslator } from './provider-responses.ts';
export type { FilePurpose, FilesTranslator, FileUploadInfo, FileUploadPlan, PartsUploadPlan, UploadAnswer, UploadedFile, UploadPart } from './provider-files.ts';

/** Everything a translator needs to know about where a request goes. */
export interface ProviderTarget {
  slug: string;
  baseUrl: string;
  apiKey?: string;
  headers: Record<string, string>;
  options: Record<string, unknown>;
  upstreamModel: string;
}

/** Translators send POST, GET and DELETE; the passthrough forwards the caller's method. */
export type UpstreamMethod = 'POST' | 'GET' | 'DELETE' | 'PUT' | 'PATCH' | 'HEAD';

export interface UpstreamRequest {
  method: UpstreamMethod;
  /**
   * Appended to the target's base URL (which may carry a path of its own); or, for a request to another host
   * (a token endpoint, a provider's polling URL), an absolute http(s) URL.
   */
  path: string;
  headers: Record<string, string>;
  body?: string;
  /**
   * Passthrough only (/proxy/<slug>/...): the caller's body follows as a stream that is not in `body` and is
   * never held, so nothing can hash it. A signer that signs the payload (SigV4) must not sign it as empty: it
   * signs `UNSIGNED-PAYLOAD` where the service accepts that, uses a bearer credential, or throws
   * CAPABILITY_NOT_SUPPORTED. Absent when the request has no body.
   */
  bodyStreamed?: boolean;
}

export type { StreamEvent, StreamFormat };

/** Turns the events of one upstream stream into canonical chunks. One instance per stream. */
export interface ChatStreamDecoder {
  /** Chunks for one event; `done: true` when the event ends the stream. Throws a GatewayError on an error event. */
  event(event: StreamEvent): { chunks: ChatCompletionChunk[]; done?: boolean };
  /** Called when the upstream closes; returns any chunks still owed (for formats that end implicitly). */
  end(): ChatCompletionChunk[];
}

/** A multi-step call (a prediction to poll, a stream URL to open): what to send after a 2xx answer. */
export interface FollowUp {
  request: UpstreamRequest;
  /** Wait this long first (polling). */
  delayMs?: number;
  /** The follow-up's answer is the stream (its events go to the stream decoder). */
  stream?: boolean;
}

export interface ChatTranslator {
  toUpstream(request: ChatCompletionRequest, target: ProviderTarget, stream: boolean): UpstreamRequest;
  /** A non-streaming answer -> canonical. `request` is the caller's, for ids and the model name. */
  fromUpstream(body: unknown, target: ProviderTarget, request: ChatCompletionRequest): ChatCompletion;
  streamFormat: StreamFormat;
  streamDecoder(target: ProviderTarget, request: ChatCompletionRequest): ChatStreamDecoder;
  /**
   * Providers whose answer takes more than one request: given a 2xx JSON answer, the next request to send, or
   * null when this answer is the final one. At most `MAX_FOLLOW_UPS` follow-ups are made per call. `step` counts
   * the follow-ups made so far (0 for the answer to the first request), for polling backoff.
   */
  followUp?(body: unknown, target: ProviderTarget, stream: boolean, step: number): FollowUp | null;
}

/**
 * POST /v1/embeddings for one provider. The request reaching toUpstream is valid and within what the provider
 * declared (dimensions only where supportsDimensions says so). fromUpstream may return vectors as floats or as
 * base64 (whichever is cheaper to get): the gateway converts them to the caller's encoding_format.
 */
export interface EmbeddingsTranslator {
  toUpstream(request: EmbeddingsRequest, target: ProviderTarget): UpstreamRequest;
  /** The answer -> canonical, one entry per input in input order (`index`), with usage when the provider gives it. */
  fromUpstream(body: unknown, target: ProviderTarget, request: EmbeddingsRequest): EmbeddingsResult;
  /** Whether this upstream model can return shorter vectors (`dimensions`); a request for them is refused otherwise. */
  supportsDimensions(upstreamModel: string): boolean;
}

/**
 * A provider's native legacy completions API (OpenAI's POST /completions: prompt, suffix, echo, best_of, an
 * integer logprobs). The answer comes back as canonical chat, the choice's text as message.content and its
 * legacy logprobs object as the choice's logprobs, so plugins and the completions ingress see chat.
 */
export interface CompletionTranslator {
  toUpstream(request: LegacyCompletionRequest, target: ProviderTarget, stream: boolean): UpstreamRequest;
  fromUpstream(body: unknown, target: ProviderTarget, request: LegacyCompletionRequest): ChatCompletion;
  streamFormat: StreamFormat;
  /** Text chunks -> canonical chunks with delta.content the text; `request` is the chat view, for estimates. */
  streamDecoder(target: ProviderTarget, request: ChatCompletionRequest): ChatStreamDecoder;
}

/** POST /v1/rerank for one provider: the scores come back in any order; the gateway sorts and trims them. */
export interface RerankTranslator {
  toUpstream(request: RerankRequest, target: ProviderTarget): UpstreamRequest;
  /** The answer -> canonical scores (index, relevance_score) and billed search units (1 when the provider says nothing). */
  fromUpstream(body: unknown, target: ProviderTarget, request: RerankRequest): RerankResult;
}

/** Speech to text: `transcription` keeps the spoken language, `translation` answers in English. */
export type TranscriptionTask = 'transcription' | 'translation';

/**
 * How a request carrying the audio travels; the core frames and sends the bytes (never the translator):
 * - `multipart`: a multipart/form-data body, `fields` in order and then the audio as the part `fileField`;
 *   `request` carries no body and no content type.
 * - `raw`: the audio bytes are the body; `request.headers` names their content type.
 * - `json`: the translator put everything (the audio as base64 or a data URI) in `request.body` itself.
 */
export type AudioUploadPlan =
  | { kind: 'multipart'; request: UpstreamRequest; fields: Array<[string, string]>; fileField: string }
  | { kind: 'raw'; request: UpstreamRequest }
  | { kind: 'json'; request: UpstreamRequest };

/**
 * POST /v1/audio/transcriptions and /v1/audio/translations for one provider. Ask the provider for its fullest
 * answer (verbose JSON with duration and segments) whatever the caller's response_format: the ingress renders the
 * caller's format, and the duration is what the request is metered by.
 */
export interface TranscriptionTranslator {
  toUpstream(request: TranscriptionRequest, target: ProviderTarget, task: TranscriptionTask): AudioUploadPlan;
  /** The final JSON answer -> canonical; usage.audio_seconds from the provider's duration when it gives one. */
  fromUpstream(body: unknown, target: ProviderTarget, request: TranscriptionRequest, task: TranscriptionTask): TranscriptionResult;
  /**
   * Asynchronous providers (upload, then a job to poll): the next request after a 2xx JSON answer, or null when
   * final. `request` is the caller's: the job a provider creates after the upload carries its language.
   */
  followUp?(body: unknown, target: ProviderTarget, step: number, request: TranscriptionRequest): FollowUp | null;
}

/**
 * POST /v1/audio/speech for one provider: the request as the provider takes it. The core sends it, and on a 2xx
 * streams the answer's body to the caller as it arrives; its Content-Type is the answer's, else `contentType`'s,
 * else the one of the asked format.
 */
export interface SpeechTranslator {
  toUpstream(request: SpeechRequest, target: ProviderTarget): UpstreamRequest;
  /** The content type of the audio when the provider's answer names none (or only a generic one). */
  contentType?(request: SpeechRequest, target: ProviderTarget): string;
  /**
   * Asynchronous providers (a prediction, a queue): given a 2xx JSON answer, the next request, or null when there
   * is none. The last follow-up fetches the audio and says `stream: true`: its body is what the caller gets.
   */
  followUp?(body: unknown, target: ProviderTarget, step: number, request: SpeechRequest): FollowUp | null;
}

/**
 * POST /v1/images/generations for one provider. `request.n` is at most the provider's `maxImages` (the core makes
 * several calls for more). A form body (stability-ai) is built with `formBody` (core/dispatch/multipart.ts).
 */
export interface ImageTranslator {
  toUpstream(request: ImageRequest, target: ProviderTarget): UpstreamRequest;
  /** The final JSON answer -> the images as the provider gave them (URL or base64); the core renders the format. */
  fromUpstream(body: unknown, target: ProviderTarget, request: ImageRequest): ImageAnswer;
  /** Asynchronous providers (a prediction, a queue, a task): the next request after a 2xx answer, or null when final. */
  followUp?(body: unknown, target: ProviderTarget, step: number, request: ImageRequest): FollowUp | null;
  /** A polled answer's progress (0-100), for /image-progress; undefined when this answer says nothing. */
  progress?(body: unknown): number | undefined;
  /**
   * Images one call can make with this target's model, when the model makes fewer than the provider's
   * `maxImages` (OpenAI's dall-e-3 makes one); undefined: the provider's.
   */
  maxImages?(target: ProviderTarget): number | undefined;
}

/**
 * POST /v1/video/generations for one provider: the core starts the provider's task, and the job runner polls it
 * (`poll` then `state`) until it ends; nothing here waits.
 */
export interface VideoTranslator {
  create(request: VideoRequest, target: ProviderTarget): UpstreamRequest;
  /** The create answer -> the provider's task id and its first state. */
  created(body: unknown, target: ProviderTarget, request: VideoRequest): { taskId: string; state: VideoTaskState };
  poll(taskId: string, target: ProviderTarget): UpstreamRequest;
  /**
   * Providers whose poll answer does not carry the result (fal: the status says COMPLETED, the output is at
   * another URL): given a 2xx poll answer, the next request of the same poll, or null when this answer is the one
   * `state` reads.
   */
  followUp?(body: unknown, target: ProviderTarget, taskId: string): FollowUp | null;
  state(body: unknown, target: ProviderTarget, taskId: string): VideoTaskState;
  /** Fetches a result that needs the provider's credential (`result.needsCredential`). */
  download?(taskId: string, resultUrl: string, target: ProviderTarget): UpstreamRequest;
}

export interface ImageCapability {
  /** Images one call can make (default 10): a request for more is split into several calls. */
  maxImages?: number;
}

/** What a provider's chat translator can do; the dispatcher refuses the rest before any I/O. */
export interface ChatCapability {
  stream: boolean;
  tools: boolean;
  /** Image parts in messages. */
  vision: boolean;
  /** n > 1 (several choices in one call). */
  n: boolean;
  /**
   * File parts in messages (`{type: 'file', file: {file_id | file_data}}`). A `file_id` reaches the translator as
   * the provider's own id for the gateway file the caller named (the dispatcher resolves it), never a gateway id.
   */
  files?: boolean;
  /** The built-in tools of the spec this provider maps to a native tool. */
  builtInTools?: BuiltInToolName[];
}

export type BuiltInToolName = 'file_search' | 'web_search' | 'code_execution' | 'computer_use' | 'search_grounding';

export interface ModalityCapability {
  stream?: boolean;
}

export interface ProviderCapabilities {
  chat?: ChatCapability;
  completion?: ModalityCapability;
  /** A native Responses API (the `responses` translator): POST /v1/responses goes there instead of chat. */
  responses?: ResponsesCapability;
  embeddings?: ModalityCapability;
  rerank?: ModalityCapability;
  transcription?: ModalityCapability;
  translation?: ModalityCapability;
  speech?: ModalityCapability;
  image?: ImageCapability;
  video?: ModalityCapability;
  /** A files API the gateway's /v1/files uploads to (the `files` translator). */
  files?: ModalityCapability;
  /** A batch API (the `batches` translator): `submit` false for one whose status the gateway polls only. */
  batch?: { submit: boolean };
  /** A realtime WebSocket API (the `realtime` hook): POST /v1/realtime/sessions and /v1/realtime/connect. */
  realtime?: ModalityCapability;
}

export type { RealtimeSessionSettings };

/** What one provider event (a JSON text frame) counts for: tokens it reports, base64 audio it carries. */
export interface RealtimeEventUsage {
  inputTokens?: number;
  outputTokens?: number;
  /** Base64 audio in the event, at the session's input (client events) or output (provider events) format. */
  audio?: string;
}

/**
 * A provider's realtime WebSocket API. The gateway relays frames verbatim; the hook says where to connect with
 * the gateway's credential, how to apply the session's settings, and what an event counts for.
 */
export interface RealtimeHook {
  connect(target: ProviderTarget): { url: string; headers: Record<string, string> };
  /** The client event that applies the settings, sent upstream before any client frame. */
  sessionUpdate(settings: RealtimeSessionSettings): unknown;
  /** A parsed JSON event, from the client (`client`) or the provider (`provider`). */
  count(event: unknown, from: 'client' | 'provider'): RealtimeEventUsage | null;
}

/** I/O a provider may do to authorize a request (token exchange); everything else is the dispatcher's. */
export interface ProviderIO {
  /** JSON over the gateway's upstream client (pools, timeouts); absolute URLs only. */
  fetchJson(url: string, init: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string }, signal: AbortSignal): Promise<{ status: number; body: unknown }>;
  /**
   * A credential cached per key until shortly before it expires; concurrent callers share one fetch. `fetch`
   * returns the value and its expiry (ms since the epoch). It gets a signal of its own, not any one caller's:
   * a client that leaves must not fail the exchange the others wait on.
   */
  cached(key: string, fetch: (signal: AbortSignal) => Promise<{ value: string; expiresAt: number }>): Promise<string>;
  now(): number;
}

/**
 * The contract version this gateway implements. defineProvider stamps it; the registry refuses a definition
 * made for another version, with a message naming both.
 */
export const PROVIDER_API_VERSION = 1;

export interface ProviderDefinition {
  /** Set by defineProvider: the contract version the translator was written against. */
  apiVersion?: number;
  /** Lower-case slug used in pipelines.yaml and in X-Provider. */
  slug: string;
  /** The wire family (openai, anthropic, gemini, ...): translators of one family share code. */
  family: string;
  displayName: string;
  /** The provider's public base URL; may hold {placeholders} that `options` must fill (then baseUrl is required). */
  defaultBaseUrl?: string;
  /** JSON schema of the provider block's `options`. */
  configSchema: JsonSchema;
  capabilities: ProviderCapabilities;
  chat?: ChatTranslator;
  completion?: CompletionTranslator;
  responses?: ResponsesTranslator;
  embeddings?: EmbeddingsTranslator;
  rerank?: RerankTranslator;
  /** Serves both transcription and translation; capabilities say which. */
  transcription?: TranscriptionTranslator;
  speech?: SpeechTranslator;
  image?: ImageTranslator;
  video?: VideoTranslator;
  files?: FilesTranslator;
  batches?: BatchesTranslator;
  realtime?: RealtimeHook;
  /**
   * Makes a built request acceptable to the upstream: request signing (SigV4) or a token from an exchange (IAM,
   * OAuth). Runs for every request, follow-ups included, inside the upstream's breaker.
   */
  authorize?(request: UpstreamRequest, target: ProviderTarget, io: ProviderIO, signal: AbortSignal): Promise<UpstreamRequest>;
  /**
   * Passthrough (/proxy/<slug>/..., core/dispatch/passthrough.ts): the headers that put the gateway's credential
   * on a caller's native request. They replace the caller's headers of the same name, so return credentials
   * only, not versions or content types a native client chooses itself. Without this hook: `Authorization:
   * Bearer <apiKey>` when the target has a key, or nothing when the provider defines `authorize`. `authorize`,
   * when defined, then runs on the passthrough request as on translated ones (see `bodyStreamed`).
   */
  passthroughHeaders?(target: ProviderTarget): Record<string, string>;
  /**
   * An upstream error answer -> the gateway error the caller gets. `headers` (lower-case names) name the error
   * where the body does not (Bedrock's x-amzn-errortype).
   */
  mapError(status: number, body: unknown, target: ProviderTarget, headers?: Record<string, string | string[] | undefined>): GatewayError;
}

const SLUG = /^[a-z][a-z0-9-]{0,62}$/;

export function defineProvider(definition: ProviderDefinition): ProviderDefinition {
  const stamped = { apiVersion: PROVIDER_API_VERSION, ...definition };
  const problems = providerProblems(stamped);
  if (problems.length > 0) throw new Error(`invalid provider definition: ${problems.join('; ')}`);
  return stamped;
}

export function providerProblems(value: unknown): string[] {
  const d = value as Partial<ProviderDefinition> | null;
  if (!d || typeof d !== 'object') return ['a provider module must export a definition object (defineProvider({...}) from aigw/provider)'];
  const problems: string[] = [];
  if (d.apiVersion === undefined) {
    problems.push(`provider ${JSON.stringify(d.slug)} has no apiVersion: make it with defineProvider from aigw/provider (this gateway implements provider contract ${PROVIDER_API_VERSION})`);
  } else if (d.apiVersion !== PROVIDER_API_VERSION) {
    problems.push(`provider ${JSON.stringify(d.slug)} was written for provider contract ${JSON.stringify(d.apiVersion)}, and this gateway implements contract ${PROVIDER_API_VERSION}: use a version of the provider made for it`);
  }
  if (typeof d.slug !== 'string' || !SLUG.test(d.slug)) problems.push(`slug must match ${SLUG} (got ${JSON.stringify(d.slug)})`);
  if (typeof d.family !== 'string' || d.family === '') problems.push(`provider ${d.slug}: family is required`);
  if (!d.configSchema || typeof d.configSchema !== 'object' || d.configSchema.type !== 'object') problems.push(`provider ${d.slug}: configSchema must be a JSON schema of type object`);
  if (!d.capabilities || typeof d.capabilities !== 'object') problems.push(`provider ${d.slug}: capabilities are required`);
  if (typeof d.mapError !== 'function') problems.push(`provider ${d.slug}: mapError must be a function`);
  if (d.capabilities?.chat) {
    const chat = d.chat;
    if (!chat || typeof chat.toUpstream !== 'function' || typeof chat.fromUpstream !== 'function' || typeof chat.streamDecoder !== 'function') {
      problems.push(`provider ${d.slug}: declares chat but has no chat translator (toUpstream, fromUpstream, streamDecoder)`);
    }
    for (const flag of ['stream', 'tools', 'vision', 'n'] as const) {
      if (typeof d.capabilities.chat[flag] !== 'boolean') problems.push(`provider ${d.slug}: capabilities.chat.${flag} must be true or false`);
    }
  }
  if (d.capabilities?.completion) {
    const c = d.completion;
    if (!c || typeof c.toUpstream !== 'function' || typeof c.fromUpstream !== 'function' || typeof c.streamDecoder !== 'function') {
      problems.push(`provider ${d.slug}: declares completion but has no completion translator (toUpstream, fromUpstream, streamDecoder)`);
    }
  }
  if (d.capabilities?.responses) {
    const r = d.responses;
    if (!r || typeof r.toUpstream !== 'function' || typeof r.forgotPrevious !== 'function' || typeof r.streamFormat !== 'string') {
      problems.push(`provider ${d.slug}: declares responses but has no responses translator (toUpstream, streamFormat, forgotPrevious)`);
    }
    if (typeof d.capabilities.responses.stream !== 'boolean') problems.push(`provider ${d.slug}: capabilities.responses.stream must be true or false`);
  }
  if (d.capabilities?.embeddings) {
    const e = d.embeddings;
    if (!e || typeof e.toUpstream !== 'function' || typeof e.fromUpstream !== 'function' || typeof e.supportsDimensions !== 'function') {
      problems.push(`provider ${d.slug}: declares embeddings but has no embeddings translator (toUpstream, fromUpstream, supportsDimensions)`);
    }
  }
  if (d.capabilities?.rerank) {
    const r = d.rerank;
    if (!r || typeof r.toUpstream !== 'function' || typeof r.fromUpstream !== 'function') {
      problems.push(`provider ${d.slug}: declares rerank but has no rerank translator (toUpstream, fromUpstream)`);
    }
  }
  if (d.capabilities?.transcription || d.capabilities?.translation) {
    const t = d.transcription;
    if (!t || typeof t.toUpstream !== 'function' || typeof t.fromUpstream !== 'function') {
      problems.push(`provider ${d.slug}: declares transcription or translation but has no transcription translator (toUpstream, fromUpstream)`);
    } else if (t.followUp !== undefined && typeof t.followUp !== 'function') problems.push(`provider ${d.slug}: transcription.followUp must be a function`);
  }
  if (d.capabilities?.speech) {
    const s = d.speech;
    if (!s || typeof s.toUpstream !== 'function') problems.push(`provider ${d.slug}: declares speech but has no speech translator (toUpstream)`);
    else if ((s.contentType !== undefined && typeof s.contentType !== 'function') || (s.followUp !== undefined && typeof s.followUp !== 'function')) problems.push(`provider ${d.slug}: speech.contentType and speech.followUp must be functions`);
  }
  if (d.capabilities?.image) {
    const i = d.image;
    const max = d.capabilities.image.maxImages;
    if (!i || typeof i.toUpstream !== 'function' || typeof i.fromUpstream !== 'function') problems.push(`provider ${d.slug}: declares image but has no image translator (toUpstream, fromUpstream)`);
    else if ([i.followUp, i.progress, i.maxImages].some((hook) => hook !== undefined && typeof hook !== 'function')) problems.push(`provider ${d.slug}: image.followUp, image.progress and image.maxImages must be functions`);
    if (max !== undefined && (!Number.isInteger(max) || max < 1 || max > 10)) problems.push(`provider ${d.slug}: capabilities.image.maxImages must be an integer from 1 to 10`);
  }
  if (d.capabilities?.video) {
    const v = d.video;
    if (!v || typeof v.create !== 'function' || typeof v.created !== 'function' || typeof v.poll !== 'function' || typeof v.state !== 'function') {
      problems.push(`provider ${d.slug}: declares video but has no video translator (create, created, poll, state)`);
    } else if ([v.download, v.followUp].some((hook) => hook !== undefined && typeof hook !== 'function')) problems.push(`provider ${d.slug}: video.download and video.followUp must be functions`);
  }
  if (d.capabilities?.files) {
    const f = d.files;
    if (!f || typeof f.upload !== 'function' || typeof f.fromUpload !== 'function' || typeof f.delete !== 'function') {
      problems.push(`provider ${d.slug}: declares files but has no files translator (upload, fromUpload, delete)`);
    } else if (f.download !== undefined && typeof f.download !== 'function') problems.push(`provider ${d.slug}: files.download must be a function`);
  }
  if (d.capabilities?.batch) {
    const b = d.batches;
    const submits = d.capabilities.batch.submit;
    if (!b || !Array.isArray(b.endpoints) || (submits && typeof b.submit !== 'function') || typeof b.status !== 'function' || typeof b.cancel !== 'function' || typeof b.fromBatch !== 'function' || typeof b.results !== 'function' || typeof b.resultLine !== 'function') {
      problems.push(`provider ${d.slug}: declares batch but has no batches translator (endpoints, submit when it submits, status, cancel, fromBatch, results, resultLine)`);
    }
  }
  if (d.authorize !== undefined && typeof d.authorize !== 'function') problems.push(`provider ${d.slug}: authorize must be a function`);
  if (d.passthroughHeaders !== undefined && typeof d.passthroughHeaders !== 'function') problems.push(`provider ${d.slug}: passthroughHeaders must be a function`);
  return problems;
}
