/**
 * ElevenLabs speech to text (Scribe): POST /speech-to-text, a multipart form with the audio as `file` and
 * `model_id` (scribe_v1, ...), word timestamps asked for. The answer is `{language_code, language_probability,
 * text, words: [{text, start, end, type: word | spacing | audio_event}]}`, times in seconds. ElevenLabs gives no
 * segments and no duration: the words become segments (by sentence, or one per word: options.segments), and the
 * audio seconds are the last word's end. A caller's prompt is not sent (Scribe takes none).
 */
import type { TranscriptionResult } from '../../core/canonical/audio.ts';
import type { ProviderTarget, TranscriptionTranslator } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { isRecord, segmentsFromWords, type SegmentGrouping, type TimedWord } from '../shared/transcripts.ts';

export interface ElevenLabsOptions {
  segments?: SegmentGrouping;
  tagAudioEvents?: boolean;
}

/** The credential header, and the operator's extra headers. */
export function elevenLabsHeaders(target: ProviderTarget): Record<string, string> {
  return { ...target.headers, accept: 'application/json', ...(target.apiKey ? { 'xi-api-key': target.apiKey } : {}) };
}

/** The timed words and audio events; `spacing` entries are the gaps between them. */
function wordsOf(value: unknown): TimedWord[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isRecord)
    .filter((w) => w.type !== 'spacing' && typeof w.text === 'string' && w.text.trim() !== '')
    .map((w) => ({ text: (w.text as string).trim(), start: Number(w.start), end: Number(w.end) }));
}

export function fromElevenLabs(body: unknown, target: ProviderTarget): TranscriptionResult {
  if (!isRecord(body) || typeof body.text !== 'string') {
    throw new GatewayError('UPSTREAM_ERROR', `${target.slug} returned a transcription without text`, { provider: target.slug });
  }
  const words = wordsOf(body.words);
  const { segments: grouping } = target.options as ElevenLabsOptions;
  const last = words.at(-1)?.end;
  const duration = last !== undefined && Number.isFinite(last) && last >= 0 ? last : undefined;
  return {
    object: 'transcription', text: body.text,
    ...(typeof body.language_code === 'string' ? { language: body.language_code } : {}),
    ...(duration !== undefined ? { duration } : {}),
    ...(words.length > 0 ? { segments: segmentsFromWords(words, grouping) } : {}),
    usage: duration !== undefined ? { audio_seconds: duration } : {},
  };
}

export const elevenLabsTranscription: TranscriptionTranslator = {
  toUpstream(request, target) {
    const { tagAudioEvents } = target.options as ElevenLabsOptions;
    const fields: Array<[string, string]> = [['model_id', target.upstreamModel], ['timestamps_granularity', 'word']];
    if (request.language !== undefined) fields.push(['language_code', request.language]);
    if (request.temperature !== undefined) fields.push(['temperature', String(request.temperature)]);
    if (tagAudioEvents !== undefined) fields.push(['tag_audio_events', String(tagAudioEvents)]);
    return { kind: 'multipart', request: { method: 'POST', path: '/speech-to-text', headers: elevenLabsHeaders(target) }, fields, fileField: 'file' };
  },
  fromUpstream: (body, target) => fromElevenLabs(body, target),
};
