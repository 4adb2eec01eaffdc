/**
 * ElevenLabs: speech to text (POST /speech-to-text, multipart, the `xi-api-key` header; see transcription.ts) and
 * text to speech (POST /text-to-speech/{voice_id}/stream: speech.ts). Scribe does not translate speech to English,
 * so /v1/audio/translations is refused before any I/O. Errors come as `{detail: {status, message}}`, or FastAPI's
 * `{detail: [{loc, msg, type}]}` for a request that fails validation.
 */
import { defineProvider } from '../../core/dispatch/provider.ts';
import { upstreamStatusError } from '../../core/dispatch/upstream-errors.ts';
import { isRecord } from '../shared/transcripts.ts';
import { elevenLabsSpeech } from './speech.ts';
import { elevenLabsTranscription } from './transcription.ts';

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

function elevenLabsErrorMessage(body: unknown, status: number): string {
  if (typeof body === 'string' && body !== '') return body.slice(0, 500);
  if (!isRecord(body)) return `HTTP ${status}`;
  const { detail } = body;
  if (isRecord(detail)) return text(detail.message) ?? text(detail.status) ?? `HTTP ${status}`;
  if (Array.isArray(detail) && isRecord(detail[0])) {
    const where = Array.isArray(detail[0].loc) ? ` (${detail[0].loc.join('.')})` : '';
    return `${text(detail[0].msg) ?? 'invalid request'}${where}`;
  }
  return text(detail) ?? text(body.message) ?? `HTTP ${status}`;
}

export default defineProvider({
  slug: 'elevenlabs',
  family: 'elevenlabs',
  displayName: 'ElevenLabs',
  defaultBaseUrl: 'https://api.elevenlabs.io/v1',
  configSchema: {
    type: 'object', additionalProperties: false,
    description: 'ElevenLabs options. The API key (apiKey) is sent as the `xi-api-key` header; a model\'s upstreamModel is the model_id: a Scribe model (scribe_v1, ...) for transcription, a speech model (eleven_multilingual_v2, eleven_flash_v2_5, ...) for speech, whose voice is the caller\'s voice_id.',
    properties: {
      segments: {
        type: 'string', enum: ['sentence', 'word'], default: 'sentence',
        description: 'How the timed words become the segments that srt, vtt and verbose_json show: one per sentence, or one per word.',
      },
      tagAudioEvents: {
        type: 'boolean',
        description: 'tag_audio_events: mark sounds such as (laughter) in the text. Unset: ElevenLabs\' default (on).',
      },
    },
  },
  capabilities: { transcription: {}, speech: {} },
  transcription: elevenLabsTranscription,
  speech: elevenLabsSpeech,
  mapError: (status, body, target) => upstreamStatusError(target.slug, status, elevenLabsErrorMessage(body, status), isRecord(body) ? body.detail ?? body : undefined),
});
