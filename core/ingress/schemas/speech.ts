/** The shape of POST /v1/audio/speech, validated and documented. */
import { SPEECH_FORMATS } from '../../canonical/audio.ts';
import type { JsonSchema } from '../../json-schema.ts';

/** The spec's limit: the text is at most 4096 characters, so 1 MB is room for any honest body. */
export const SPEECH_BODY_LIMIT = 1024 * 1024;

/** Lengths are in code points (the validator's default), as characters are metered. Out-of-range values are refused, never clamped. */
export const speechRequestSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['model', 'input', 'voice'],
  properties: {
    model: { type: 'string', minLength: 1, description: 'A model id configured in pipelines.yaml.' },
    input: { type: 'string', minLength: 1, maxLength: 4096, description: 'The text to speak, 1 to 4096 characters; metered by its characters.' },
    voice: { type: 'string', minLength: 1, description: 'The provider\'s voice identifier (OpenAI: alloy, echo, fable, onyx, nova, shimmer, ...).' },
    response_format: { type: 'string', enum: [...SPEECH_FORMATS], default: 'mp3', description: 'mp3 (audio/mpeg), opus, aac, flac, wav or pcm (audio/<format>).' },
    speed: { type: 'number', minimum: 0.25, maximum: 4, default: 1, description: '0.25 to 4.0.' },
  },
};

export const speechResponseSchema: JsonSchema = { type: 'string', description: 'Binary audio, streamed as the provider sends it.' };
