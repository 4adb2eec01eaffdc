/**
 * Transcription and translation in OpenAI's wire format (POST /audio/transcriptions, /audio/translations):
 * a multipart form with the audio as `file`. Whisper models are asked for verbose_json, whose duration and
 * segments the gateway renders every response_format from and meters by; the gpt-4o transcribe models take only
 * json and text, so they are asked for json and bill by tokens (usage.input_tokens / output_tokens), which are
 * passed on. `createOpenAiTranscription` is the family's one translator: Azure and the OpenAI-compatible
 * catalogue pass hooks for their paths and headers.
 */
import type { TranscriptionRequest, TranscriptionResult, TranscriptSegment } from '../../core/canonical/audio.ts';
import type { ProviderTarget, TranscriptionTask, TranscriptionTranslator } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { openaiHeaders } from './chat.ts';

export interface OpenAiTranscriptionHooks {
  /** The request path under the base URL, query included (default `/audio/transcriptions` or `/audio/translations`). */
  path?(task: TranscriptionTask, target: ProviderTarget): string;
  /** The request headers, credential included (default: Bearer and OpenAI's organization/project). */
  headers?(target: ProviderTarget): Record<string, string>;
  /** Whether an upstream model answers verbose_json (default: every model but OpenAI's gpt-4o transcribe family). */
  verbose?(upstreamModel: string): boolean;
  /**
   * The form's fields as the provider takes them, from the OpenAI ones (model, response_format, language, prompt,
   * temperature, in that order); may throw a GatewayError for a field the provider refuses.
   */
  fields?(fields: Array<[string, string]>, request: TranscriptionRequest, task: TranscriptionTask, target: ProviderTarget): Array<[string, string]>;
}

/** OpenAI's newer transcription models answer json or text only. */
const JSON_ONLY = /^gpt-4o(-mini)?-transcribe/;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function segmentsOf(value: unknown): TranscriptSegment[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter(isObject).map((s, i) => ({
    id: typeof s.id === 'number' ? s.id : i,
    start: Number(s.start), end: Number(s.end), text: typeof s.text === 'string' ? s.text : '',
  }));
}

const count = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined);

/** The answer -> canonical: `usage` is either {type: duration, seconds} or {type: tokens, input_tokens, output_tokens}. */
export function fromOpenAiTranscription(body: unknown, target: ProviderTarget): TranscriptionResult {
  if (!isObject(body) || typeof body.text !== 'string') {
    throw new GatewayError('UPSTREAM_ERROR', `${target.slug} returned a transcription without text`, { provider: target.slug });
  }
  const usage = isObject(body.usage) ? body.usage : {};
  const duration = count(body.duration);
  const segments = segmentsOf(body.segments);
  const input = count(usage.input_tokens);
  const output = count(usage.output_tokens);
  return {
    object: 'transcription', text: body.text,
    ...(typeof body.language === 'string' ? { language: body.language } : {}),
    ...(duration !== undefined ? { duration } : {}),
    ...(segments ? { segments } : {}),
    usage: {
      ...(duration !== undefined ? { audio_seconds: duration } : usage.type === 'duration' && count(usage.seconds) !== undefined ? { audio_seconds: count(usage.seconds)! } : {}),
      ...(input !== undefined || output !== undefined ? { prompt_tokens: input ?? 0, completion_tokens: output ?? 0, total_tokens: count(usage.total_tokens) ?? (input ?? 0) + (output ?? 0) } : {}),
    },
  };
}

export function createOpenAiTranscription(hooks: OpenAiTranscriptionHooks = {}): TranscriptionTranslator {
  const verbose = hooks.verbose ?? ((model: string) => !JSON_ONLY.test(model));
  return {
    toUpstream(request, target, task) {
      const headers = { ...(hooks.headers?.(target) ?? openaiHeaders(target)) };
      delete headers['content-type']; // the core sets the form's, with its boundary
      const openai: Array<[string, string]> = [['model', target.upstreamModel], ['response_format', verbose(target.upstreamModel) ? 'verbose_json' : 'json']];
      if (task === 'transcription' && request.language !== undefined) openai.push(['language', request.language]);
      if (request.prompt !== undefined) openai.push(['prompt', request.prompt]);
      if (request.temperature !== undefined) openai.push(['temperature', String(request.temperature)]);
      const fields = hooks.fields ? hooks.fields(openai, request, task, target) : openai;
      const path = hooks.path?.(task, target) ?? (task === 'translation' ? '/audio/translations' : '/audio/transcriptions');
      return { kind: 'multipart', request: { method: 'POST', path, headers }, fields, fileField: 'file' };
    },
    fromUpstream: (body, target) => fromOpenAiTranscription(body, target),
  };
}

export const openaiTranscription = createOpenAiTranscription();
