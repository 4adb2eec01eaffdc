/** The media fixtures on the providers with their own speech-to-text formats: Deepgram, AssemblyAI, ElevenLabs. */
import assemblyai from '../../providers/assemblyai/index.ts';
import deepgram from '../../providers/deepgram/index.ts';
import elevenlabs from '../../providers/elevenlabs/index.ts';
import { runMediaConformance } from './media.ts';
import { assemblyAiTranscriptionWire, deepgramTranscriptionWire, elevenLabsTranscriptionWire } from './wires/media-own.ts';

runMediaConformance({
  provider: deepgram, credential: 'dg-media-kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1\napiKey: dg-media-kit`,
  transcription: { wire: deepgramTranscriptionWire, model: 'nova-3' },
});

runMediaConformance({
  provider: assemblyai, credential: 'aai-media-kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v2\napiKey: aai-media-kit\noptions: { pollIntervalMs: 1 }`,
  transcription: { wire: assemblyAiTranscriptionWire(), model: 'universal' },
});

runMediaConformance({
  provider: elevenlabs, credential: 'el-media-kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1\napiKey: el-media-kit`,
  transcription: { wire: elevenLabsTranscriptionWire, model: 'scribe_v1' },
});
