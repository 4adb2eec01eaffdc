/**
 * fal: generative media through fal's queue (queue.ts): speech to text (whisper),
 * text to speech (kokoro), images (FLUX) and video (Kling, Veo), each a submit -> poll -> result chain, with
 * `Authorization: Key <key>`. The upstream model is the fal model id (fal-ai/flux/dev). Errors come as FastAPI's
 * `{detail: "message"}` or `{detail: [{loc, msg, type}]}` for input that fails validation.
 */
import { defineProvider } from '../../core/dispatch/provider.ts';
import { upstreamStatusError } from '../../core/dispatch/upstream-errors.ts';
import { isRecord } from '../shared/transcripts.ts';
import { FAL_MAX_IMAGES, falImage } from './image.ts';
import { DEFAULT_POLL_INTERVAL_MS } from './queue.ts';
import { falSpeech } from './speech.ts';
import { falTranscription } from './transcription.ts';
import { falVideo } from './video.ts';

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

export function falErrorMessage(body: unknown, status: number): string {
  if (typeof body === 'string' && body !== '') return body.slice(0, 500);
  if (!isRecord(body)) return `HTTP ${status}`;
  const { detail } = body;
  if (Array.isArray(detail) && isRecord(detail[0])) {
    const where = Array.isArray(detail[0].loc) ? ` (${detail[0].loc.join('.')})` : '';
    return `${text(detail[0].msg) ?? 'invalid input'}${where}`;
  }
  return text(detail) ?? text(body.error) ?? text(body.message) ?? `HTTP ${status}`;
}

export default defineProvider({
  slug: 'fal-ai',
  family: 'fal',
  displayName: 'fal',
  defaultBaseUrl: 'https://queue.fal.run',
  configSchema: {
    type: 'object', additionalProperties: false,
    description: 'fal options. The API key (apiKey) is sent as `Authorization: Key <key>`; a model\'s upstreamModel is the fal model id (fal-ai/whisper, fal-ai/kokoro/american-english, fal-ai/flux/dev, fal-ai/kling-video/v2.1/master/text-to-video).',
    properties: {
      pollIntervalMs: {
        type: 'integer', minimum: 1, default: DEFAULT_POLL_INTERVAL_MS,
        description: 'The wait before each status poll of a queued or running request; a call gives up after 600 polls.',
      },
      input: { type: 'object', description: 'Extra input fields sent with every request of this provider block (a model\'s own knobs: num_inference_steps, enable_safety_checker, ...); the translated fields take precedence.' },
      speechTextField: {
        type: 'string', enum: ['prompt', 'text', 'input'], default: 'prompt',
        description: 'The input field a text-to-speech model reads the text from (Kokoro: prompt).',
      },
      speechFormat: {
        type: 'string', enum: ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'], default: 'wav',
        description: 'The one audio format the text-to-speech model makes (Kokoro: wav); a request for another response_format is refused.',
      },
      imageFormat: { type: 'string', enum: ['png', 'jpeg'], default: 'png', description: 'output_format asked of image models.' },
      maxImages: {
        type: 'integer', minimum: 1, maximum: FAL_MAX_IMAGES, default: FAL_MAX_IMAGES,
        description: 'num_images one request may ask of this block\'s image models (FLUX: 4); larger n is split into several requests.',
      },
      durationSuffix: {
        type: 'string', default: '',
        description: 'Appended to a video request\'s seconds for the duration field: Kling takes "5", Veo 3 "8s" (suffix "s").',
      },
    },
  },
  capabilities: {
    transcription: {},
    // Whisper translates to English too (task: translate, which the translator sends), but the catalogue does not
    // list fal for translation: not declared until it does.
    speech: {},
    image: { maxImages: FAL_MAX_IMAGES },
    video: {},
  },
  transcription: falTranscription,
  speech: falSpeech,
  image: falImage,
  video: falVideo,
  // Passthrough (/proxy/fal-ai/...): fal's Key scheme, not the default Bearer.
  passthroughHeaders: (target): Record<string, string> => (target.apiKey ? { authorization: `Key ${target.apiKey}` } : {}),
  mapError: (status, body, target) => upstreamStatusError(target.slug, status, falErrorMessage(body, status), isRecord(body) ? body.detail ?? body : undefined),
});
