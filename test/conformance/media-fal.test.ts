/** The media fixtures on fal's queue: whisper, a TTS model making MP3 (text field `text`), FLUX. */
import fal from '../../providers/fal-ai/index.ts';
import { runMediaConformance } from './media.ts';
import { falImageWire, falSpeechWire, falTranscriptionWire } from './wires/media-fal.ts';

runMediaConformance({
  provider: fal, credential: 'fal-media-kit',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}\napiKey: fal-media-kit\noptions: { pollIntervalMs: 1, speechTextField: text, speechFormat: mp3 }`,
  transcription: { wire: falTranscriptionWire(), model: 'fal-ai/whisper' },
  speech: { wire: falSpeechWire(), model: 'fal-ai/elevenlabs/tts/multilingual-v2', voice: 'Rachel' },
  image: { wire: falImageWire(), model: 'fal-ai/flux/dev' },
});
