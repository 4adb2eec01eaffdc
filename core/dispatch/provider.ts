/**
 * The provider contract: a translator between the canonical format and one provider's wire format.
 * Translators do no I/O; the dispatcher owns connections, timeouts, breakers and streaming.
 */
import type { JsonSchema } from '../config/schema.ts';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, Modality } from '../canonical/chat.ts';
import type { GatewayError } from '../errors.ts';
import type { SseEvent } from '../streaming/sse.ts';

/** Everything a translator needs to know about where a request goes. */
export interface ProviderTarget {
  slug: string;
  baseUrl: string;
  apiKey?: string;
  headers: Record<string, string>;
  options: Record<string, unknown>;
  upstreamModel: string;
}

export interface UpstreamRequest {
  method: 'POST' | 'GET' | 'DELETE';
  /** Appended to the target's base URL (which may carry a path of its own). */
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** Turns the events of one upstream stream into canonical chunks. One instance per stream. */
export interface ChatStreamDecoder {
  /** Chunks for one event; `done: true` when the event ends the stream. Throws a GatewayError on an error event. */
  event(event: SseEvent): { chunks: ChatCompletionChunk[]; done?: boolean };
  /** Called when the upstream closes; returns any chunks still owed (for formats that end implicitly). */
  end(): ChatCompletionChunk[];
}

export interface ChatTranslator {
  toUpstream(request: ChatCompletionRequest, target: ProviderTarget, stream: boolean): UpstreamRequest;
  fromUpstream(body: unknown, target: ProviderTarget): ChatCompletion;
  streamFormat: 'sse';
  streamDecoder(target: ProviderTarget): ChatStreamDecoder;
}

export interface ModalityCapability {
  stream?: boolean;
  tools?: boolean;
  vision?: boolean;
}

export interface ProviderDefinition {
  /** Lower-case slug used in pipelines.yaml and in X-Provider. */
  slug: string;
  /** The wire family (openai, anthropic, gemini, ...): translators of one family share code. */
  family: string;
  displayName: string;
  defaultBaseUrl?: string;
  /** JSON schema of the provider block's `options`. */
  configSchema: JsonSchema;
  capabilities: Partial<Record<Modality, ModalityCapability>>;
  chat?: ChatTranslator;
  /** An upstream error answer -> the gateway error the caller gets. */
  mapError(status: number, body: unknown, target: ProviderTarget): GatewayError;
}

const SLUG = /^[a-z][a-z0-9-]{0,62}$/;

export function defineProvider(definition: ProviderDefinition): ProviderDefinition {
  const problems = providerProblems(definition);
  if (problems.length > 0) throw new Error(`invalid provider definition: ${problems.join('; ')}`);
  return definition;
}

export function providerProblems(value: unknown): string[] {
  const d = value as Partial<ProviderDefinition> | null;
  if (!d || typeof d !== 'object') return ['a provider module must export a definition object (defineProvider({...}))'];
  const problems: string[] = [];
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
  }
  return problems;
}
