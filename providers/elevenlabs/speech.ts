/**
 * ElevenLabs text to speech: POST /text-to-speech/{voice_id}/stream?output_format=..., the JSON body `{text,
 * model_id, voice_settings}`, the `xi-api-key` header; the answer is the audio, streamed as it is made. The
 * caller's voice is the voice_id, the model's upstreamModel the model_id (eleven_multilingual_v2, ...).
 *
 * Each OpenAI format is one output_format every plan may ask for: mp3 at 44.1 kHz 128 kbps, opus at 48 kHz
 * 64 kbps, wav and pcm at 24 kHz (OpenAI's pcm rate; ElevenLabs' 44.1 kHz PCM needs a Pro plan). ElevenLabs
 * gives no aac or flac. `speed` is voice_settings.speed, 0.7 to 1.2.
 */
import type { SpeechTranslator } from '../../core/dispatch/provider.ts';
import { speechFormat, speechSpeed, type SpeechFormatTable } from '../shared/speech.ts';

const OUTPUT_FORMATS: SpeechFormatTable<string> = {
  mp3: 'mp3_44100_128',
  opus: 'opus_48000_64',
  wav: 'wav_24000',
  pcm: 'pcm_24000',
};

const SPEED = { min: 0.7, max: 1.2 };

export const elevenLabsSpeech: SpeechTranslator = {
  toUpstream(request, target) {
    const outputFormat = speechFormat(OUTPUT_FORMATS, request, target);
    const speed = speechSpeed(SPEED, request, target);
    const body = { text: request.input, model_id: target.upstreamModel, ...(speed !== undefined ? { voice_settings: { speed } } : {}) };
    const headers = { ...target.headers, 'content-type': 'application/json', ...(target.apiKey ? { 'xi-api-key': target.apiKey } : {}) };
    const path = `/text-to-speech/${encodeURIComponent(request.voice)}/stream?${new URLSearchParams({ output_format: outputFormat }).toString()}`;
    return { method: 'POST', path, headers, body: JSON.stringify(body) };
  },
};
