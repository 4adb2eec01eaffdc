/** The media fixtures on fal's queue: whisper, Kokoro (WAV only), FLUX. */
import fal from '../../providers/fal-ai/index.ts';
import { runMediaConformance } from './media.ts';
import { falImageWire, falSpeechWire, falTranscriptionWire } from './wires/media-fal.ts';

runMediaConformance({
  provider: fal, credential: 'fal-media-kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}\napiKey: fal-media-kit\noptions: { pollIntervalMs: 1 }`,
  transcription: { wire: falTranscriptionWire(), model: 'fal-ai/whisper' },
  speech: { wire: falSpeechWire(), model: 'fal-ai/kokoro/american-english', voice: 'af_heart', format: 'wav' },
  image: { wire: falImageWire(), model: 'fal-ai/flux/dev' },
});
