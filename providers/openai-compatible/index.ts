/**
 * The OpenAI-compatible providers: each catalogue entry becomes a provider definition on the OpenAI
 * translator (providers/openai/chat.ts), with the entry's policy and quirk hooks plugged in.
 */
import { defineProvider, type ChatTranslator, type CompletionTranslator, type ProviderDefinition, type ProviderTarget } from '../../core/dispatch/provider.ts';
import { createOpenAiChat, openaiHeaders } from '../openai/chat.ts';
import { createOpenAiCompletion } from '../openai/completion.ts';
import { openaiErrorFromBody } from '../openai/errors.ts';
import { CATALOGUE, type CompatibleEntry } from './catalogue.ts';
import { compatibleEmbeddings } from './embeddings.ts';
import { applyReasoning, checkRefusals, normalizeChunk, normalizeCompletion, shapeBody } from './policy.ts';
import { compatibleRerank } from './rerank.ts';
import { compatibleSpeech } from './speech.ts';
import { compatibleTranscription } from './transcription.ts';

/** Bearer only when a key is configured (ollama and vllm run without one), plus the entry's own headers. */
function compatibleHeaders(entry: CompatibleEntry): (target: ProviderTarget) => Record<string, string> {
  return (target) => {
    const headers = openaiHeaders({ ...target, options: {} });
    return entry.headers ? { ...entry.headers(target), ...headers } : headers;
  };
}

export function compatibleChat(entry: CompatibleEntry): ChatTranslator {
  const policy = entry.policy ?? {};
  return createOpenAiChat({
    streamOptions: entry.streamOptions ?? true,
    headers: compatibleHeaders(entry),
    body(body, request, target) {
      checkRefusals(policy, request, target);
      applyReasoning(policy.reasoning ?? { style: 'effort' }, body, request);
      entry.body?.(body, request, target);
      shapeBody(policy, body);
    },
    completion: normalizeCompletion,
    chunk(chunk, request) {
      entry.chunk?.(chunk);
      normalizeChunk(chunk, request);
      return chunk;
    },
  });
}

function compatibleCompletion(entry: CompatibleEntry, legacy: { path?: string }): CompletionTranslator {
  const { path } = legacy;
  return createOpenAiCompletion({ headers: compatibleHeaders(entry), ...(path ? { path: () => path } : {}) });
}

function describe(entry: CompatibleEntry): string {
  const where = entry.defaultBaseUrl ? `Default base URL ${entry.defaultBaseUrl}.` : `No default base URL: set baseUrl to ${entry.baseUrlTemplate}.`;
  const modalities = ['chat', ...(entry.completion ? ['completion'] : []), ...(entry.embeddings ? ['embeddings'] : []), ...(entry.rerank ? ['rerank'] : []),
    ...(entry.audio ? ['transcription'] : []), ...(entry.audio?.translation ? ['translation'] : []), ...(entry.speech ? ['speech'] : []),
    ...(entry.image ? ['image'] : []), ...(entry.video ? ['video'] : [])].join(', ');
  return `${entry.displayName} (OpenAI-compatible: ${modalities}). ${where}${entry.notes ? ` ${entry.notes}` : ''}`;
}

export function compatibleProvider(entry: CompatibleEntry): ProviderDefinition {
  return defineProvider({
    slug: entry.slug,
    family: 'openai-compatible',
    displayName: entry.displayName,
    ...(entry.defaultBaseUrl ? { defaultBaseUrl: entry.defaultBaseUrl } : {}),
    configSchema: { type: 'object', additionalProperties: false, description: describe(entry), properties: entry.options ?? {} },
    capabilities: {
      chat: entry.chat,
      ...(entry.completion ? { completion: { stream: true } } : {}),
      ...(entry.embeddings ? { embeddings: {} } : {}),
      ...(entry.rerank ? { rerank: {} } : {}),
      ...(entry.audio ? { transcription: {} } : {}),
      ...(entry.audio?.translation ? { translation: {} } : {}),
      ...(entry.image ? { image: entry.image.maxImages ? { maxImages: entry.image.maxImages } : {} } : {}),
      ...(entry.speech ? { speech: {} } : {}),
      ...(entry.video ? { video: {} } : {}),
    },
    chat: compatibleChat(entry),
    ...(entry.completion ? { completion: compatibleCompletion(entry, entry.completion) } : {}),
    ...(entry.embeddings ? { embeddings: compatibleEmbeddings(entry.embeddings, compatibleHeaders(entry)) } : {}),
    ...(entry.rerank ? { rerank: compatibleRerank(entry.rerank) } : {}),
    ...(entry.audio ? { transcription: compatibleTranscription(entry.audio, compatibleHeaders(entry)) } : {}),
    ...(entry.image ? { image: entry.image.translator(compatibleHeaders(entry)) } : {}),
    ...(entry.speech ? { speech: compatibleSpeech(entry.speech, compatibleHeaders(entry)) } : {}),
    ...(entry.video ? { video: entry.video.translator(compatibleHeaders(entry)) } : {}),
    mapError: (status, body, target) => openaiErrorFromBody(target, status, body),
  });
}

export const openAiCompatibleProviders: readonly ProviderDefinition[] = CATALOGUE.map(compatibleProvider);

/** One provider by slug, for tests and for readers who want to see one entry's definition. */
export function compatibleProviderBySlug(slug: string): ProviderDefinition {
  const found = openAiCompatibleProviders.find((p) => p.slug === slug);
  if (!found) throw new Error(`no OpenAI-compatible provider "${slug}"`);
  return found;
}
