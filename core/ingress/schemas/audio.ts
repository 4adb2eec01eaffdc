/** The shapes of POST /v1/audio/transcriptions and /v1/audio/translations, validated and documented. */
import { TRANSCRIPTION_FORMATS } from '../../canonical/audio.ts';
import type { JsonSchema } from '../../json-schema.ts';

/** The spec's limit for both endpoints, enforced while reading. */
export const AUDIO_BODY_LIMIT = 10 * 1024 * 1024;

const common: Record<string, JsonSchema> = {
  model: { type: 'string', minLength: 1, description: 'A model id configured in pipelines.yaml.' },
  file: { type: 'string', minLength: 1, description: 'The audio, base64 (JSON bodies); in a multipart form, the file part named file.' },
  file_url: { type: 'string', minLength: 1, maxLength: 2048, description: 'URL of the audio (instead of file), fetched by the gateway: https (http only with outbound.allowHttp), no private, loopback or link-local address unless allow-listed in outbound.allowedAddresses, up to 3 redirects each checked again, at most 10 MB (413) within 30 s.' },
  prompt: { type: 'string', maxLength: 4096, description: 'Text that guides the model\'s style or continues a previous segment.' },
  response_format: { type: 'string', enum: [...TRANSCRIPTION_FORMATS], default: 'json', description: 'json ({text}), text, srt, vtt (rendered by the gateway from the segments) or verbose_json (language, duration, segments).' },
  temperature: { type: 'number', minimum: 0, maximum: 1 },
};

export const transcriptionRequestSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['model'],
  properties: { ...common, language: { type: 'string', pattern: '^[a-z]{2}$', description: 'ISO 639-1 code of the spoken language.' } },
};

export const translationRequestSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['model'],
  properties: common,
};

const segment: JsonSchema = {
  type: 'object', required: ['id', 'start', 'end', 'text'],
  properties: { id: { type: 'integer' }, start: { type: 'number' }, end: { type: 'number' }, text: { type: 'string' } },
};

export const transcriptionResponseSchema: JsonSchema = {
  type: 'object', required: ['text'],
  description: 'json: {text}; verbose_json adds task, language, duration and segments. text, srt and vtt answer text/plain and text/vtt bodies.',
  properties: {
    text: { type: 'string' },
    task: { type: 'string', enum: ['transcribe', 'translate'] },
    language: { type: 'string' },
    duration: { type: 'number', description: 'Seconds of audio.' },
    segments: { type: 'array', items: segment },
    usage: { type: 'object', properties: { type: { type: 'string', enum: ['duration'] }, seconds: { type: 'number' } } },
  },
};
