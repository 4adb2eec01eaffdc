/**
 * AssemblyAI speech to text, asynchronous, in three steps the exchange follows up:
 * 1. POST /upload with the raw audio bytes -> `{upload_url}`;
 * 2. POST /transcript `{audio_url, speech_model, language_code | language_detection}` -> `{id, status}`;
 * 3. GET /transcript/{id} every `pollIntervalMs` (default 3000, the interval AssemblyAI's own SDK polls at)
 *    while the status is `queued` or `processing`, until `completed` (the answer) or `error` (an upstream error
 *    with AssemblyAI's message). The exchange stops after MAX_FOLLOW_UPS requests: 30 minutes at the default.
 * The transcript's `audio_duration` is in seconds; its words' and utterances' start and end in milliseconds.
 * AssemblyAI takes no prompt or temperature here: a caller's are not sent.
 */
import type { TranscriptionResult, TranscriptSegment } from '../../core/canonical/audio.ts';
import type { FollowUp, ProviderTarget, TranscriptionTranslator, UpstreamRequest } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { isRecord, seconds, segmentsFromWords, type TimedWord } from '../shared/transcripts.ts';

export const DEFAULT_POLL_INTERVAL_MS = 3000;

export interface AssemblyAiOptions {
  pollIntervalMs?: number;
  /** Segments from `utterances` (which AssemblyAI gives with speaker_labels) or sentences of `words`. */
  speakerLabels?: boolean;
}

/** The credential header (the bare key, no scheme), and the operator's extra headers. */
export function assemblyAiHeaders(target: ProviderTarget): Record<string, string> {
  return { ...target.headers, accept: 'application/json', ...(target.apiKey ? { authorization: target.apiKey } : {}) };
}

const malformed = (target: ProviderTarget, what: string) =>
  new GatewayError('UPSTREAM_ERROR', `${target.slug} returned ${what}`, { provider: target.slug });

/** Milliseconds -> seconds, for AssemblyAI's timings. */
const fromMs = (value: unknown): number => Number(value) / 1000;

function timed(value: unknown): TimedWord[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isRecord).map((w) => ({ text: typeof w.text === 'string' ? w.text : '', start: fromMs(w.start), end: fromMs(w.end) }));
}

function segmentsOf(transcript: Record<string, unknown>): TranscriptSegment[] | undefined {
  if (Array.isArray(transcript.utterances) && transcript.utterances.length > 0) {
    return timed(transcript.utterances).map((u, id) => ({ id, ...u }));
  }
  const words = timed(transcript.words);
  return words.length > 0 ? segmentsFromWords(words) : undefined;
}

export function fromAssemblyAi(body: unknown, target: ProviderTarget): TranscriptionResult {
  if (!isRecord(body) || body.status !== 'completed') throw malformed(target, 'a transcript that is not completed');
  // A completed transcript of silence has text null.
  const text = typeof body.text === 'string' ? body.text : body.text === null ? '' : undefined;
  if (text === undefined) throw malformed(target, 'a completed transcript without text');
  const duration = seconds(body.audio_duration);
  const segments = segmentsOf(body);
  return {
    object: 'transcription', text,
    ...(typeof body.language_code === 'string' ? { language: body.language_code } : {}),
    ...(duration !== undefined ? { duration } : {}),
    ...(segments ? { segments } : {}),
    usage: duration !== undefined ? { audio_seconds: duration } : {},
  };
}

function poll(id: string, target: ProviderTarget): FollowUp {
  const { pollIntervalMs } = target.options as AssemblyAiOptions;
  const request: UpstreamRequest = { method: 'GET', path: `/transcript/${encodeURIComponent(id)}`, headers: assemblyAiHeaders(target) };
  return { request, delayMs: pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS };
}

export const assemblyAiTranscription: TranscriptionTranslator = {
  toUpstream(_request, target) {
    const headers = { ...assemblyAiHeaders(target), 'content-type': 'application/octet-stream' };
    return { kind: 'raw', request: { method: 'POST', path: '/upload', headers } };
  },
  followUp(body, target, _step, request) {
    if (!isRecord(body)) throw malformed(target, 'an answer that is not a JSON object');
    if (typeof body.upload_url === 'string') {
      const job: Record<string, unknown> = { audio_url: body.upload_url, speech_model: target.upstreamModel };
      if (request.language !== undefined) job.language_code = request.language;
      else job.language_detection = true;
      if ((target.options as AssemblyAiOptions).speakerLabels) job.speaker_labels = true;
      const headers = { ...assemblyAiHeaders(target), 'content-type': 'application/json' };
      return { request: { method: 'POST', path: '/transcript', headers, body: JSON.stringify(job) } };
    }
    switch (body.status) {
      case 'completed': return null;
      case 'error': {
        const why = typeof body.error === 'string' && body.error !== '' ? body.error : 'no reason given';
        // The poll itself answered 200: said as upstreamStatus, the failed job is neither retried on AssemblyAI
        // (the same audio would fail again, after another upload) nor counted against its breaker, but another
        // target may still be tried.
        throw new GatewayError('UPSTREAM_ERROR', `${target.slug}: the transcript failed: ${why}`, { provider: target.slug, upstreamStatus: 200, upstreamError: { status: 'error', error: why } });
      }
      case 'queued':
      case 'processing':
        if (typeof body.id !== 'string' || body.id === '') throw malformed(target, `a ${body.status} transcript without an id`);
        return poll(body.id, target);
      default: throw malformed(target, `a transcript in an unknown status (${JSON.stringify(body.status)})`);
    }
  },
  fromUpstream: (body, target) => fromAssemblyAi(body, target),
};
