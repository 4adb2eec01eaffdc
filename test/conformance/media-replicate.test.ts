/** The media fixtures on Replicate: Whisper transcription, MiniMax speech and FLUX images, each a polled prediction. */
import replicate from '../../providers/replicate/index.ts';
import { runMediaConformance } from './media.ts';
import { replicateImageWire, replicateSpeechWire, replicateTranscriptionWire } from './wires/media-replicate.ts';

runMediaConformance({
  provider: replicate, credential: 'r8-media-kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1\napiKey: r8-media-kit\noptions: { pollIntervalMs: 1, maxPollIntervalMs: 2 }`,
  transcription: { wire: replicateTranscriptionWire(), model: 'openai/whisper' },
  speech: { wire: replicateSpeechWire(), model: 'minimax/speech-02-turbo', voice: 'Wise_Woman' },
  image: { wire: replicateImageWire(), model: 'black-forest-labs/flux-schnell' },
});
