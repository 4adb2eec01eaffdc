/**
 * The media targets of the OpenAI-compatible catalogue: every entry declaring audio, speech or images runs the
 * media fixtures, its wire shaped as its documentation says. OpenAI's form is the default for transcription and
 * speech; every image host names its wire (each answers its own way, even the OpenAI-shaped ones).
 */
import assert from 'node:assert/strict';
import { CATALOGUE } from '../../providers/openai-compatible/catalogue.ts';
import { compatibleProviderBySlug } from '../../providers/openai-compatible/index.ts';
import type { ImageWire, MediaRequest, MediaTarget, TranscriptionWire } from './media.ts';
import { fireworksImageWire, hyperbolicImageWire, nebiusImageWire, siliconflowImageWire, volcengineImageWire, zhipuImageWire } from './wires/media-images.ts';
import { openAiImageWire, openAiSpeechWire, openAiTranscriptionWire } from './wires/media-openai.ts';

/** Each provider's transcription answer, when it is not OpenAI's verbose_json. */
const TRANSCRIPTION: Record<string, { wire: TranscriptionWire; language?: boolean }> = {
  // Voxtral: segments and usage.prompt_audio_seconds, no duration field.
  mistral: {
    wire: {
      ...openAiTranscriptionWire({ answer: (s) => ({ model: 'voxtral-mini', text: s.text, language: s.language, segments: s.segments, usage: { prompt_audio_seconds: s.duration, prompt_tokens: 40, completion_tokens: 8, total_tokens: 48 } }) }),
      reportsDuration: true, reportsSegments: true,
    },
  },
  sambanova: { wire: openAiTranscriptionWire({ verbose: false }) },
  // No language, prompt or temperature; json text only.
  siliconflow: { wire: openAiTranscriptionWire({ verbose: false }), language: false },
};

/** SiliconFlow names a system voice `<model>:<voice>`: the caller's bare voice, once its model prefix is checked. */
function siliconflowVoice(req: MediaRequest): string {
  const voice = String(req.json.voice);
  const prefix = `${String(req.json.model)}:`;
  return voice.startsWith(prefix) ? voice.slice(prefix.length) : `unqualified ${voice}`;
}

/** Each host's documented speech and image request fields (its API reference): the wire asserts no other is sent. */
const FIELDS = {
  groqSpeech: ['model', 'input', 'voice', 'response_format', 'speed', 'sample_rate'],
  togetherSpeech: ['model', 'input', 'voice', 'response_format', 'response_encoding', 'sample_rate', 'stream', 'language'],
  siliconflowSpeech: ['model', 'input', 'voice', 'response_format', 'sample_rate', 'stream', 'speed', 'gain'],
  togetherImage: [
    'model', 'prompt', 'n', 'width', 'height', 'steps', 'seed', 'negative_prompt', 'response_format', 'image_url', 'output_format', 'guidance',
    'disable_safety_checker', 'image_loras', 'reference_images', 'aspect_ratio',
  ],
  xaiImage: ['model', 'prompt', 'n', 'response_format', 'user', 'quality', 'aspect_ratio', 'resolution'],
  deepinfraImage: ['model', 'prompt', 'n', 'size', 'quality', 'style', 'response_format', 'user'],
  nscaleImage: ['model', 'prompt', 'size', 'n'],
};

const SPEECH: Record<string, NonNullable<MediaTarget['speech']>> = {
  // Groq's PlayAI and Orpheus models answer anything but wav with 400 (providers/openai-compatible/speech.ts).
  groq: { wire: openAiSpeechWire({ documented: FIELDS.groqSpeech }), model: 'playai-tts', voice: 'Fritz-PlayAI', format: 'wav' },
  'together-ai': { wire: openAiSpeechWire({ documented: FIELDS.togetherSpeech }), model: 'cartesia/sonic-2', voice: 'laughing man' },
  siliconflow: { wire: openAiSpeechWire({ documented: FIELDS.siliconflowSpeech, voiceOf: siliconflowVoice }), model: 'FunAudioLLM/CosyVoice2-0.5B', voice: 'alex' },
};

const IMAGE: Record<string, { wire: ImageWire; model: string }> = {
  // width/height and base64 are Together's names; it answers as asked.
  'together-ai': { wire: openAiImageWire({ documented: FIELDS.togetherImage, b64: ['base64'] }), model: 'black-forest-labs/FLUX.1-schnell' },
  'fireworks-ai': { wire: fireworksImageWire, model: 'flux-1-schnell-fp8' },
  // xAI's base64 comes as a whole data URL.
  xai: { wire: openAiImageWire({ documented: FIELDS.xaiImage, dataUrl: true }), model: 'grok-2-image' },
  // b64_json only, whatever is asked.
  deepinfra: { wire: openAiImageWire({ documented: FIELDS.deepinfraImage, answers: 'bytes' }), model: 'black-forest-labs/FLUX-1-schnell' },
  nscale: { wire: openAiImageWire({ documented: FIELDS.nscaleImage, answers: 'bytes' }), model: 'stabilityai/stable-diffusion-xl-base-1.0' },
  nebius: { wire: nebiusImageWire, model: 'black-forest-labs/flux-schnell' },
  hyperbolic: { wire: hyperbolicImageWire, model: 'FLUX.1-dev' },
  volcengine: { wire: volcengineImageWire, model: 'seedream-3-0-t2i-250415' },
  zhipu: { wire: zhipuImageWire, model: 'cogview-4-250304' },
  // batch_size (n > 1) is Kolors' only: the n-split fixture needs it.
  siliconflow: { wire: siliconflowImageWire, model: 'Kwai-Kolors/Kolors' },
};

/** Options a host's wire needs in its provider block. */
const BLOCK: Record<string, (baseUrl: string) => string> = {
  'fireworks-ai': (baseUrl) => `options: { audioBaseUrl: ${baseUrl}/audio/v1 }`,
};

/** The base URL's path under the fake, as each host's default has it (a path the wire matches on). */
const PATHS: Record<string, string> = { 'fireworks-ai': '/inference/v1', deepinfra: '/v1/openai', volcengine: '/api/v3', zhipu: '/api/paas/v4' };

const entries = CATALOGUE.filter((entry) => entry.audio || entry.speech || entry.image);
for (const entry of entries) {
  if (entry.image) assert.ok(IMAGE[entry.slug], `${entry.slug} declares images: it needs an image wire here`);
  if (entry.speech) assert.ok(SPEECH[entry.slug], `${entry.slug} declares speech: it needs a speech target here`);
}

/** The catalogue's media hosts: those with transcription (whose gateways boot in one file), then the others. */
export const MEDIA_SLUGS = {
  audio: entries.filter((entry) => entry.audio).map((entry) => entry.slug),
  other: entries.filter((entry) => !entry.audio).map((entry) => entry.slug),
};

export function compatibleMediaTarget(slug: string): MediaTarget {
  const provider = compatibleProviderBySlug(slug);
  const transcription = TRANSCRIPTION[slug];
  const credential = `${slug}-media-kit`;
  return {
    provider, credential,
    providerBlock: (baseUrl) => [`baseUrl: ${baseUrl}${PATHS[slug] ?? '/v1'}`, `apiKey: ${credential}`, ...(BLOCK[slug] ? [BLOCK[slug](baseUrl)] : [])].join('\n'),
    ...(provider.capabilities.transcription
      ? { transcription: { wire: transcription?.wire ?? openAiTranscriptionWire(), model: 'whisper-large-v3', ...(transcription?.language === false ? { language: false } : {}) } }
      : {}),
    ...(provider.capabilities.speech ? { speech: SPEECH[slug]! } : {}),
    ...(provider.capabilities.image ? { image: IMAGE[slug]! } : {}),
  };
}
