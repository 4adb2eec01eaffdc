/**
 * Speech to text with Whisper on Replicate (openai/whisper and models with its schema): the audio goes inside
 * the prediction's JSON as a data: URI, with `transcription: "plain text"` (the segments come with every answer).
 * The output is {transcription, segments, detected_language, translation}; `translate: true` makes the model
 * transcribe and also translate, the English text being `translation` while the segments stay the spoken
 * language's, so a translation answers with the text only and is metered by the segments' end. Replicate
 * recommends data: URIs for files under 1 MB; larger ones (up to the gateway's 10 MB) are sent the same way.
 */
import type { TranscriptionRequest, TranscriptionResult, TranscriptSegment } from '../../core/canonical/audio.ts';
import type { ProviderTarget, TranscriptionTask, TranscriptionTranslator } from '../../core/dispatch/provider.ts';
import { isRecord, seconds } from '../shared/transcripts.ts';
import { mediaPrediction, succeeded } from './media.ts';
import { malformed, nextStep } from './predictions.ts';

export function whisperInput(request: TranscriptionRequest, task: TranscriptionTask): Record<string, unknown> {
  const { audio } = request;
  const input: Record<string, unknown> = {
    audio: `data:${audio.mimeType};base64,${audio.bytes.toString('base64')}`,
    transcription: 'plain text',
    translate: task === 'translation',
  };
  if (request.language !== undefined && task === 'transcription') input.language = request.language;
  if (request.temperature !== undefined) input.temperature = request.temperature;
  if (request.prompt !== undefined) input.initial_prompt = request.prompt;
  return input;
}

function segmentsOf(value: unknown): TranscriptSegment[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter(isRecord).map((s, i) => ({
    id: typeof s.id === 'number' ? s.id : i,
    start: Number(s.start),
    end: Number(s.end),
    text: typeof s.text === 'string' ? s.text.trim() : '',
  }));
}

export function fromWhisper(body: unknown, target: ProviderTarget, task: TranscriptionTask): TranscriptionResult {
  const output = succeeded(body, target).output;
  if (!isRecord(output)) throw malformed(target, 'Whisper output (not an object)');
  const text = task === 'translation' ? output.translation : output.transcription;
  if (typeof text !== 'string') throw malformed(target, `Whisper output without ${task === 'translation' ? 'translation' : 'transcription'}`);
  const segments = segmentsOf(output.segments);
  const heard = seconds(segments?.at(-1)?.end);
  const language = typeof output.detected_language === 'string' && output.detected_language !== '' ? output.detected_language : undefined;
  if (task === 'translation') {
    return { object: 'transcription', text: text.trim(), language: 'english', usage: heard !== undefined ? { audio_seconds: heard } : {} };
  }
  return {
    object: 'transcription', text: text.trim(),
    ...(language ? { language } : {}),
    ...(segments ? { segments } : {}),
    usage: heard !== undefined ? { audio_seconds: heard } : {},
  };
}

export const replicateTranscription: TranscriptionTranslator = {
  toUpstream: (request, target, task) => ({ kind: 'json', request: mediaPrediction(target, whisperInput(request, task), true) }),
  followUp: (body, target, step) => nextStep(body, target, false, step),
  fromUpstream: (body, target, _request, task) => fromWhisper(body, target, task),
};
