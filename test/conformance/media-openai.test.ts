/** The media fixtures (transcription, translation, speech) on OpenAI and Azure OpenAI. */
import assert from 'node:assert/strict';
import openai from '../../providers/openai/index.ts';
import { azureOpenAi } from '../../providers/azure-openai/index.ts';
import { runMediaConformance } from './media.ts';
import { openAiSpeechWire, openAiTranscriptionWire } from './wires/media-openai.ts';

runMediaConformance({
  provider: openai,
  credential: 'sk-media-kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1\napiKey: sk-media-kit`,
  transcription: { wire: openAiTranscriptionWire(), model: 'whisper-1' },
  speech: { wire: openAiSpeechWire(), model: 'tts-1', voice: 'alloy' },
});

const azure = {
  assertAuth: (req: { headers: Record<string, unknown> }, credential: string) => assert.equal(req.headers['api-key'], credential),
  // The deployment is in the path: /openai/deployments/<deployment>/audio/...
  modelOf: (req: { path: string }) => /\/deployments\/([^/]+)\//.exec(req.path)?.[1],
};
runMediaConformance({
  provider: azureOpenAi,
  credential: 'azure-media-kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/openai\napiKey: azure-media-kit`,
  transcription: { wire: openAiTranscriptionWire(azure), model: 'whisper-prod' },
  speech: { wire: openAiSpeechWire(azure), model: 'tts-prod', voice: 'alloy' },
});
