/**
 * Deepgram: speech to text (POST /listen, the raw audio as the body, `Authorization: Token <key>`) and text to
 * speech (Aura, POST /speak: speech.ts). Deepgram does not translate speech to English, so /v1/audio/translations
 * is refused before any I/O.
 * Errors come as `{err_code, err_msg, request_id}`, or `{category, message, details}` for a malformed request.
 */
import { defineProvider } from '../../core/dispatch/provider.ts';
import { upstreamStatusError } from '../../core/dispatch/upstream-errors.ts';
import { isRecord } from '../shared/transcripts.ts';
import { deepgramSpeech } from './speech.ts';
import { deepgramTranscription } from './transcription.ts';

function deepgramErrorMessage(body: unknown, status: number): string {
  if (typeof body === 'string' && body !== '') return body.slice(0, 500);
  if (!isRecord(body)) return `HTTP ${status}`;
  const message = [body.err_msg, body.message, body.reason].find((m): m is string => typeof m === 'string' && m !== '');
  const details = typeof body.details === 'string' && body.details !== '' ? `: ${body.details}` : '';
  return message ? `${message}${details}` : `HTTP ${status}`;
}

export default defineProvider({
  slug: 'deepgram',
  family: 'deepgram',
  displayName: 'Deepgram',
  defaultBaseUrl: 'https://api.deepgram.com/v1',
  configSchema: {
    type: 'object', additionalProperties: false,
    description: 'Deepgram options. The API key (apiKey) is sent as `Authorization: Token <key>`; a model\'s upstreamModel is the Deepgram model: nova-3, nova-2, whisper-large, ... for transcription; an Aura voice model (aura-2-thalia-en, ...) for speech, where the model is the voice.',
    properties: {
      smartFormat: { type: 'boolean', default: true, description: 'smart_format: numbers, dates, currency and e-mail addresses written as such (punctuate is always on).' },
      diarize: { type: 'boolean', default: false, description: 'diarize: tell the speakers apart (Deepgram bills it as an add-on); the transcript and its segments are unchanged.' },
    },
  },
  capabilities: { transcription: {}, speech: {} },
  transcription: deepgramTranscription,
  speech: deepgramSpeech,
  mapError: (status, body, target) => upstreamStatusError(target.slug, status, deepgramErrorMessage(body, status), isRecord(body) ? body : undefined),
});
