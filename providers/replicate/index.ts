/**
 * Replicate: every call is a prediction (created, polled or streamed; see predictions.ts): chat with a language
 * model, speech to text with Whisper (transcription.ts), text to speech (speech.ts), images (image.ts) and video
 * jobs (video.ts). The media models' input fields are in models.ts.
 */
import { defineProvider } from '../../core/dispatch/provider.ts';
import { replicateError } from './errors.ts';
import { MAX_IMAGES, replicateImage } from './image.ts';
import { createPrediction, nextStep, predictionCompletion } from './predictions.ts';
import { replicateSpeech } from './speech.ts';
import { replicateStreamDecoder } from './stream.ts';
import { replicateTranscription } from './transcription.ts';
import { replicateVideo } from './video.ts';

export default defineProvider({
  slug: 'replicate',
  family: 'replicate',
  displayName: 'Replicate',
  defaultBaseUrl: 'https://api.replicate.com/v1',
  configSchema: {
    type: 'object', additionalProperties: false,
    description: 'Replicate options. The upstream model is owner/name (an official model), owner/name:version, a version id, or deployments/owner/name. The API token (apiKey) is sent as a bearer token.',
    properties: {
      waitSeconds: { type: 'integer', minimum: 1, maximum: 60, default: 60, description: 'Prefer: wait=N on creating a chat, transcription or speech prediction: how long Replicate holds the request for the output before the gateway polls. Image and video predictions are polled from the start, so their progress is seen.' },
      pollIntervalMs: { type: 'integer', minimum: 1, default: 500, description: 'The first wait before polling an unfinished prediction; each later wait is 1.5 times longer.' },
      maxPollIntervalMs: { type: 'integer', minimum: 1, default: 5000, description: 'The longest wait between two polls.' },
      maxTokensField: { type: 'string', enum: ['max_tokens', 'max_new_tokens'], default: 'max_tokens', description: "The input field the model reads its output limit from (Llama 2 era models: max_new_tokens)." },
      input: { type: 'object', description: 'Extra input fields sent with every chat prediction (prompt_template, top_k, ...).' },
      modelInput: {
        type: 'object', additionalProperties: { type: 'object' },
        description: 'Extra input fields per upstream model (owner/name, or as the model names it), for media models: e.g. {"black-forest-labs/flux-schnell": {"go_fast": false}}. The fields the gateway maps from the request take precedence.',
      },
    },
  },
  capabilities: {
    // Prompt-in, text-out models: no tools, no image parts, one output per prediction.
    chat: { stream: true, tools: false, vision: false, n: false },
    transcription: {},
    speech: {},
    image: { maxImages: MAX_IMAGES },
    video: {},
  },
  chat: {
    toUpstream: createPrediction,
    followUp: nextStep,
    fromUpstream: predictionCompletion,
    streamFormat: 'sse',
    streamDecoder: (target) => replicateStreamDecoder(target),
  },
  transcription: replicateTranscription,
  speech: replicateSpeech,
  image: replicateImage,
  video: replicateVideo,
  mapError: (status, body, target) => replicateError(target, status, body),
});
