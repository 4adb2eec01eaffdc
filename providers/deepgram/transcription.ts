/**
 * Deepgram pre-recorded speech to text: POST /listen with the audio bytes as the body (their content type in the
 * header) and the options as query parameters. The answer is `{metadata: {duration}, results: {channels:
 * [{alternatives: [{transcript}], detected_language?}], utterances?}}`; `utterances=true` is always asked for, so
 * the utterances (start, end, transcript in seconds) become the segments. Deepgram takes no prompt or temperature:
 * a caller's are not sent.
 */
import type { TranscriptionResult, TranscriptSegment } from '../../core/canonical/audio.ts';
import type { ProviderTarget, TranscriptionTranslator } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { isRecord, seconds } from '../shared/transcripts.ts';

export interface DeepgramOptions {
  smartFormat?: boolean;
  diarize?: boolean;
}

/** The credential header, and the operator's extra headers. */
export function deepgramHeaders(target: ProviderTarget): Record<string, string> {
  return { ...target.headers, accept: 'application/json', ...(target.apiKey ? { authorization: `Token ${target.apiKey}` } : {}) };
}

function utterancesOf(value: unknown): TranscriptSegment[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter(isRecord).map((u, id) => ({ id, start: Number(u.start), end: Number(u.end), text: typeof u.transcript === 'string' ? u.transcript : '' }));
}

export function fromDeepgram(body: unknown, target: ProviderTarget, language?: string): TranscriptionResult {
  const results = isRecord(body) && isRecord(body.results) ? body.results : undefined;
  const channel = Array.isArray(results?.channels) && isRecord(results.channels[0]) ? results.channels[0] : undefined;
  const alternative = Array.isArray(channel?.alternatives) && isRecord(channel.alternatives[0]) ? channel.alternatives[0] : undefined;
  if (!alternative || typeof alternative.transcript !== 'string') {
    throw new GatewayError('UPSTREAM_ERROR', `${target.slug} returned a transcription without results.channels[0].alternatives[0].transcript`, { provider: target.slug });
  }
  const metadata = isRecord(body) && isRecord(body.metadata) ? body.metadata : {};
  const duration = seconds(metadata.duration);
  const segments = utterancesOf(results?.utterances);
  const spoken = typeof channel?.detected_language === 'string' ? channel.detected_language : language;
  return {
    object: 'transcription', text: alternative.transcript,
    ...(spoken ? { language: spoken } : {}),
    ...(duration !== undefined ? { duration } : {}),
    ...(segments ? { segments } : {}),
    usage: duration !== undefined ? { audio_seconds: duration } : {},
  };
}

export const deepgramTranscription: TranscriptionTranslator = {
  toUpstream(request, target) {
    const options = target.options as DeepgramOptions;
    const query = new URLSearchParams({ model: target.upstreamModel });
    // Without a language Deepgram assumes English: let it detect the spoken one instead.
    if (request.language !== undefined) query.set('language', request.language);
    else query.set('detect_language', 'true');
    query.set('punctuate', 'true');
    query.set('smart_format', String(options.smartFormat ?? true));
    query.set('utterances', 'true');
    if (options.diarize) query.set('diarize', 'true');
    const headers = { ...deepgramHeaders(target), 'content-type': request.audio.mimeType };
    return { kind: 'raw', request: { method: 'POST', path: `/listen?${query}`, headers } };
  },
  fromUpstream: (body, target, request) => fromDeepgram(body, target, request.language),
};
