/**
 * Deepgram Aura text to speech: POST /speak?model=<model>&encoding=..., the JSON body `{text}`, `Authorization:
 * Token <key>`; the answer is the audio itself. Deepgram's model is the voice (aura-2-thalia-en): the request is
 * sent with the gateway model's upstreamModel, and a caller's `voice` has no Deepgram field to go to.
 *
 * Each OpenAI format is one of Deepgram's documented encoding/container combinations: mp3 (22.05 kHz), opus in
 * an Ogg container (48 kHz), aac, flac, wav as linear16 in a WAV container, and pcm as OpenAI's is: linear16
 * without a container at 24000 Hz. `speed` is Aura-2's speaking rate, 0.7 to 1.5.
 */
import type { SpeechTranslator } from '../../core/dispatch/provider.ts';
import { speechFormat, speechSpeed, type SpeechFormatTable } from '../shared/speech.ts';

const FORMATS: SpeechFormatTable<Record<string, string>> = {
  mp3: { encoding: 'mp3' },
  opus: { encoding: 'opus', container: 'ogg' },
  aac: { encoding: 'aac' },
  flac: { encoding: 'flac' },
  wav: { encoding: 'linear16', container: 'wav' },
  pcm: { encoding: 'linear16', container: 'none', sample_rate: '24000' },
};

const SPEED = { min: 0.7, max: 1.5 };

export const deepgramSpeech: SpeechTranslator = {
  toUpstream(request, target) {
    const format = speechFormat(FORMATS, request, target);
    const speed = speechSpeed(SPEED, request, target);
    const query = new URLSearchParams({ model: target.upstreamModel, ...format, ...(speed !== undefined ? { speed: String(speed) } : {}) });
    const headers = { ...target.headers, 'content-type': 'application/json', ...(target.apiKey ? { authorization: `Token ${target.apiKey}` } : {}) };
    return { method: 'POST', path: `/speak?${query.toString()}`, headers, body: JSON.stringify({ text: request.input }) };
  },
};
