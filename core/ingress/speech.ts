/**
 * POST /v1/audio/speech (capability `tts`): a JSON body (at most 1 MB), answered with raw audio, not JSON. The
 * provider's audio is streamed to the caller as it arrives, never held whole; a caller that leaves aborts the
 * upstream call (gw.signal). The request is metered by its input's characters, billed in full once the provider
 * answers.
 */
import { Readable } from 'node:stream';
import type { CanonicalSpeechRequest, SpeechFormat, SpeechResult } from '../canonical/audio.ts';
import { GatewayError } from '../errors.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import { compileRequestSchema } from '../validation.ts';
import type { DispatchEndpoint } from './endpoint.ts';
import { SPEECH_BODY_LIMIT, speechRequestSchema, speechResponseSchema } from './schemas/speech.ts';

interface SpeechFields {
  model: string;
  input: string;
  voice: string;
  response_format?: SpeechFormat;
  speed?: number;
}

const validateSpeech = compileRequestSchema<SpeechFields>(speechRequestSchema);

export function parseSpeech(body: unknown): CanonicalSpeechRequest {
  const fields = validateSpeech(body);
  return {
    modality: 'speech', model: fields.model, stream: false,
    body: {
      model: fields.model, input: fields.input, voice: fields.voice, response_format: fields.response_format ?? 'mp3',
      ...(fields.speed !== undefined ? { speed: fields.speed } : {}),
    },
  };
}

function respond(ctx: GatewayContext): void {
  const result = ctx.state.gw.result as SpeechResult | undefined;
  if (result?.object !== 'speech') throw new GatewayError('INTERNAL_ERROR', 'The pipeline answered a speech request with another kind of answer');
  const audio = Readable.from(result.audio, { objectMode: false });
  // Headers are gone by then: an upstream that breaks midway can only cut the connection, so the caller sees a
  // truncated answer instead of waiting on one that never ends.
  audio.once('error', () => ctx.res.destroy());
  ctx.status = 200;
  ctx.set('Content-Type', result.contentType);
  ctx.body = audio;
}

export const speechEndpoint: DispatchEndpoint = {
  kind: 'dispatch', method: 'POST', path: '/v1/audio/speech', capability: 'tts', errorEnvelope: 'canonical', bodyLimitBytes: SPEECH_BODY_LIMIT,
  summary: 'Text to speech (OpenAI wire format): the audio, streamed as the provider sends it.',
  description: 'At most 1 MB (413 past it). input 1-4096 characters (metered by them), voice, response_format mp3 (default), opus, aac, flac, wav or pcm, speed 0.25-4.0; values out of range are refused, never clamped.',
  requestSchema: speechRequestSchema,
  responses: { '200': { description: 'The audio in the asked format (audio/mpeg for mp3, audio/<format> otherwise).', schema: speechResponseSchema, contentType: 'audio/*' } },
  parse: parseSpeech,
  respond,
};
