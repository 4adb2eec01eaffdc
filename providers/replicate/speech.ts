/**
 * Text to speech on Replicate (MiniMax speech models: {text, voice_id, speed, audio_format}): a prediction whose
 * output is the URL of the audio file. The prediction is created holding the request (Prefer: wait), polled
 * while unfinished, and the last follow-up fetches the file, which the core streams to the caller. The file is
 * on Replicate's delivery host, which needs no credential: neither the key nor the operator's headers go there.
 * Formats and speeds the model cannot give are refused before any call, never approximated.
 */
import { SPEECH_CONTENT_TYPES, type SpeechRequest } from '../../core/canonical/audio.ts';
import type { ProviderTarget, SpeechTranslator } from '../../core/dispatch/provider.ts';
import { mediaPrediction, outputUrls, succeeded } from './media.ts';
import { refused, speechProfile } from './models.ts';
import { asPrediction, malformed, poll } from './predictions.ts';

export function speechInput(request: SpeechRequest, target: ProviderTarget): Record<string, unknown> {
  const profile = speechProfile(target);
  if (!profile.formats.includes(request.response_format)) {
    throw refused(target, `response_format ${request.response_format} (it makes ${profile.formats.join(', ')})`, 'response_format');
  }
  const [slowest, fastest] = profile.speed;
  if (request.speed !== undefined && (request.speed < slowest || request.speed > fastest)) {
    throw refused(target, `speed ${request.speed} (it takes ${slowest} to ${fastest})`, 'speed');
  }
  const input: Record<string, unknown> = { text: request.input, [profile.voiceField]: request.voice, [profile.formatField]: request.response_format };
  if (request.speed !== undefined) input.speed = request.speed;
  return input;
}

export const replicateSpeech: SpeechTranslator = {
  toUpstream: (request, target) => mediaPrediction(target, speechInput(request, target), true),
  contentType: (request) => SPEECH_CONTENT_TYPES[request.response_format],
  followUp(body, target, step) {
    const p = asPrediction(body, target);
    if (p.status === 'starting' || p.status === 'processing') return poll(p, target, step);
    const [url, ...more] = outputUrls(succeeded(p, target), target);
    if (more.length > 0) throw malformed(target, 'speech prediction output (several files)');
    return { request: { method: 'GET', path: url!, headers: { accept: 'audio/*' } }, stream: true };
  },
};
