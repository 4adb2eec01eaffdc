/** The media fixtures (transcription, translation, speech, images) on OpenAI and Azure OpenAI, and images on Recraft. */
import assert from 'node:assert/strict';
import openai from '../../providers/openai/index.ts';
import { azureOpenAi } from '../../providers/azure-openai/index.ts';
import recraft from '../../providers/recraft/index.ts';
import { runMediaConformance } from './media.ts';
import { openAiImageWire, openAiSpeechWire, openAiTranscriptionWire } from './wires/media-openai.ts';

// dall-e-2: a model that takes response_format and n up to 10 (dall-e-3 makes one image a call, GPT image models answer base64 only).
runMediaConformance({
  provider: openai,
  credential: 'sk-media-kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1\napiKey: sk-media-kit`,
  transcription: { wire: openAiTranscriptionWire(), model: 'whisper-1' },
  speech: { wire: openAiSpeechWire(), model: 'tts-1', voice: 'alloy' },
  image: { wire: openAiImageWire(), model: 'dall-e-2' },
});

const azure = {
  assertAuth: (req: { headers: Record<string, unknown> }, credential: string) => assert.equal(req.headers['api-key'], credential),
  // The deployment is in the path: /openai/deployments/<deployment>/audio/... or .../images/generations.
  modelOf: (req: { path: string }) => /\/deployments\/([^/]+)\//.exec(req.path)?.[1],
};
runMediaConformance({
  provider: azureOpenAi,
  credential: 'azure-media-kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/openai\napiKey: azure-media-kit`,
  transcription: { wire: openAiTranscriptionWire(azure), model: 'whisper-prod' },
  speech: { wire: openAiSpeechWire(azure), model: 'tts-prod', voice: 'alloy' },
  image: { wire: openAiImageWire(azure), model: 'dalle-prod' },
});

// Recraft answers url or b64_json as asked, at most six images a call.
const RECRAFT_FIELDS = ['prompt', 'model', 'style', 'style_id', 'substyle', 'size', 'n', 'negative_prompt', 'response_format', 'controls', 'text_layout', 'artistic_level'];
runMediaConformance({
  provider: recraft,
  credential: 'recraft-media-kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1\napiKey: recraft-media-kit`,
  image: { wire: openAiImageWire({ documented: RECRAFT_FIELDS }), model: 'recraftv3' },
});
