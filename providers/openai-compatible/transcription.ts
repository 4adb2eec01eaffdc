/**
 * Transcription and translation on the OpenAI-compatible hosts that serve them: OpenAI's multipart form
 * (providers/openai/transcription.ts) with each host's documented differences as data: whether it answers
 * verbose_json (duration and segments) or only json (text: the gateway then meters the file's own duration), the
 * OpenAI fields it does not take (refused before any I/O rather than rejected upstream or dropped silently), and
 * where a host serves audio from another base URL. Mistral's API is OpenAI-shaped but its own: hooks below.
 */
import type { TranscriptionResult } from '../../core/canonical/audio.ts';
import type { ProviderTarget, TranscriptionTask, TranscriptionTranslator } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { createOpenAiTranscription, fromOpenAiTranscription, type OpenAiTranscriptionHooks } from '../openai/transcription.ts';

/** The caller's optional fields a host may not document. */
export type AudioField = 'language' | 'prompt' | 'temperature';

export type AudioFormHook = NonNullable<OpenAiTranscriptionHooks['fields']>;

export interface CompatibleAudio {
  /** POST /audio/translations too (speech to English text); absent: transcriptions only. */
  translation?: boolean;
  /**
   * What the host is asked for: `verbose_json` (the default: duration and segments), `json` (text only), or
   * `none` when it documents no response_format field at all (its one answer is JSON).
   */
  format?: 'verbose_json' | 'json' | 'none';
  /** Fields the host does not take: a request carrying one is refused (400) before any I/O. */
  refuse?: readonly AudioField[];
  /** A host serving audio elsewhere than the chat base URL: the provider option naming it, else its default. */
  baseUrl?: { option: string; default(upstreamModel: string): string };
  /** Reshapes the form after the above (fields the host names otherwise, or adds). */
  form?: AudioFormHook;
  /** The host's answer -> canonical, when it is not OpenAI's. */
  answer?(body: unknown, target: ProviderTarget): TranscriptionResult;
}

const AUDIO_PATHS: Record<TranscriptionTask, string> = { transcription: '/audio/transcriptions', translation: '/audio/translations' };

function refused(target: ProviderTarget, asked: string[]): GatewayError {
  return new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${target.slug} does not support the audio parameter${asked.length > 1 ? 's' : ''} ${asked.join(', ')}`,
    { provider: target.slug, parameters: asked });
}

/** `headers` are the entry's, as its chat sends them (providers/openai-compatible/index.ts). */
export function compatibleTranscription(spec: CompatibleAudio, headers: (target: ProviderTarget) => Record<string, string>): TranscriptionTranslator {
  const format = spec.format ?? 'verbose_json';
  const refuse = spec.refuse ?? [];
  const { baseUrl } = spec;
  const translator = createOpenAiTranscription({
    headers,
    verbose: () => format === 'verbose_json',
    ...(baseUrl ? {
      path(task: TranscriptionTask, target: ProviderTarget) {
        const configured = target.options[baseUrl.option];
        const base = typeof configured === 'string' && configured !== '' ? configured : baseUrl.default(target.upstreamModel);
        return base.replace(/\/+$/, '') + AUDIO_PATHS[task];
      },
    } : {}),
    fields(fields, request, task, target) {
      const asked = refuse.filter((name) => request[name] !== undefined);
      if (asked.length > 0) throw refused(target, asked);
      const shaped = format === 'none' ? fields.filter(([name]) => name !== 'response_format') : fields;
      return spec.form ? spec.form(shaped, request, task, target) : shaped;
    },
  });
  const { answer } = spec;
  return answer ? { ...translator, fromUpstream: (body, target) => answer(body, target) } : translator;
}

/**
 * Mistral (POST /v1/audio/transcriptions, Voxtral models) documents model, file, language, temperature,
 * timestamp_granularities, diarize and context_bias, and rejects unknown fields: no response_format and no prompt.
 * Segments come with `timestamp_granularities=segment`, which Mistral does not take together with `language`:
 * asked for only when the caller names no language.
 */
export const mistralAudioForm: AudioFormHook = (fields) =>
  fields.some(([name]) => name === 'language') ? fields : [...fields, ['timestamp_granularities', 'segment']];

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const count = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined);

/** Mistral's answer: {model, text, language, segments[{text, start, end}], usage{prompt_audio_seconds, *_tokens}}. */
export function mistralAudioAnswer(body: unknown, target: ProviderTarget): TranscriptionResult {
  const result = fromOpenAiTranscription(body, target);
  const usage = isObject(body) && isObject(body.usage) ? body.usage : {};
  const seconds = count(usage.prompt_audio_seconds);
  const prompt = count(usage.prompt_tokens);
  const completion = count(usage.completion_tokens);
  return {
    ...result,
    usage: {
      ...(seconds !== undefined ? { audio_seconds: seconds } : {}),
      ...(prompt !== undefined || completion !== undefined
        ? { prompt_tokens: prompt ?? 0, completion_tokens: completion ?? 0, total_tokens: count(usage.total_tokens) ?? (prompt ?? 0) + (completion ?? 0) }
        : {}),
    },
  };
}

/** Together documents `language` defaulting to `en`: `auto` keeps OpenAI's meaning of no language (detect it). */
export const togetherAudioForm: AudioFormHook = (fields, _request, task) =>
  task === 'transcription' && !fields.some(([name]) => name === 'language') ? [...fields, ['language', 'auto']] : fields;

/**
 * Fireworks serves Whisper from its own hosts, one per model (its docs' serverless endpoints), not from the
 * inference base URL; the provider option `audioBaseUrl` replaces them (a dedicated endpoint).
 */
export function fireworksAudioBaseUrl(upstreamModel: string): string {
  return /whisper-v3-turbo/.test(upstreamModel) ? 'https://audio-turbo.us-virginia-1.direct.fireworks.ai/v1' : 'https://audio-prod.us-virginia-1.direct.fireworks.ai/v1';
}
