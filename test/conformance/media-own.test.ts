/**
 * The media fixtures on the providers with their own speech formats: Deepgram (speech to text and Aura), AssemblyAI,
 * ElevenLabs (Scribe and text to speech).
 */
import assemblyai from '../../providers/assemblyai/index.ts';
import deepgram from '../../providers/deepgram/index.ts';
import elevenlabs from '../../providers/elevenlabs/index.ts';
import { runMediaConformance } from './media.ts';
import {
  assemblyAiTranscriptionWire, deepgramSpeechWire, deepgramTranscriptionWire, elevenLabsSpeechWire, elevenLabsTranscriptionWire,
} from './wires/media-own.ts';

runMediaConformance({
  provider: deepgram, credential: 'dg-media-kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1\napiKey: dg-media-kit`,
  transcription: { wire: deepgramTranscriptionWire, model: 'nova-3' },
  // Aura's model is the voice: the caller's voice has no field to go to.
  speech: { wire: deepgramSpeechWire, model: 'aura-2-thalia-en' },
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
  speech: { wire: elevenLabsSpeechWire, model: 'eleven_multilingual_v2', voice: 'JBFqnCBsd6RMkjVDRZzb' },
});
