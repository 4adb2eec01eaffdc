/**
 * The media fixtures on every OpenAI-compatible provider whose catalogue entry declares audio: OpenAI's form at
 * the provider's path, each answer shaped as its documentation says (json only, Voxtral's usage, ...).
 */
import assert from 'node:assert/strict';
import { CATALOGUE } from '../../providers/openai-compatible/catalogue.ts';
import { compatibleProviderBySlug } from '../../providers/openai-compatible/index.ts';
import { runMediaConformance, type TranscriptionWire } from './media.ts';
import { openAiTranscriptionWire } from './wires/media-openai.ts';

/** Each provider's answer, when it is not OpenAI's verbose_json. */
const TRANSCRIPTION: Record<string, { wire: TranscriptionWire; language?: boolean; block?: (baseUrl: string) => string }> = {
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
  'fireworks-ai': { wire: openAiTranscriptionWire(), block: (baseUrl) => `options: { audioBaseUrl: ${baseUrl}/audio/v1 }` },
};

const audioSlugs = CATALOGUE.filter((entry) => entry.audio).map((entry) => entry.slug);
assert.ok(audioSlugs.length >= 8, 'the catalogue declares audio on its whisper hosts');

for (const slug of audioSlugs) {
  const own = TRANSCRIPTION[slug];
  runMediaConformance({
    provider: compatibleProviderBySlug(slug),
    credential: `${slug}-media-kit`,
    providerBlock: (baseUrl) => [`baseUrl: ${baseUrl}/v1`, `apiKey: ${slug}-media-kit`, ...(own?.block ? [own.block(baseUrl)] : [])].join('\n'),
    transcription: { wire: own?.wire ?? openAiTranscriptionWire(), model: 'whisper-large-v3', ...(own?.language === false ? { language: false } : {}) },
  });
}
