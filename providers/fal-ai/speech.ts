/**
 * Text to speech on fal (fal-ai/kokoro/..., and models shaped like it): input `{prompt, voice, speed}`, output
 * `{audio: {url, content_type}}`. After the queue's COMPLETED the output is read, and the last follow-up fetches
 * the audio file from fal's CDN as the stream the caller gets, without the fal credential (the CDN is public and
 * is not fal's API). A model gives one format (Kokoro: WAV): any other asked format is refused before any I/O,
 * as the gateway does not transcode. The text field and the format are options, for models that differ.
 */
import { SPEECH_CONTENT_TYPES } from '../../core/canonical/audio.ts';
import type { ProviderTarget, SpeechTranslator } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { isRecord } from '../shared/transcripts.ts';
import { fileUrl, malformed, options, queueStep, submit } from './queue.ts';

const formatOf = (target: ProviderTarget) => options(target).speechFormat ?? 'wav';

export const falSpeech: SpeechTranslator = {
  toUpstream(request, target) {
    const format = formatOf(target);
    if (request.response_format !== format) {
      throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${target.slug} does not support response_format ${request.response_format} for ${target.upstreamModel}: it gives ${format} only`, {
        provider: target.slug, capability: 'response_format',
      });
    }
    const input: Record<string, unknown> = { [options(target).speechTextField ?? 'prompt']: request.input, voice: request.voice };
    if (request.speed !== undefined) input.speed = request.speed;
    return submit(target, input);
  },
  contentType: (_request, target) => SPEECH_CONTENT_TYPES[formatOf(target)],
  followUp(body, target) {
    const next = queueStep(body, target);
    if (next) return next;
    if (!isRecord(body)) throw malformed(target, 'a speech output that is not a JSON object');
    const url = fileUrl(body.audio, target, 'audio');
    if (url.startsWith('data:')) throw malformed(target, 'the audio inline (a data: URI) rather than as a file URL');
    return { request: { method: 'GET', path: url, headers: { accept: '*/*' } }, stream: true };
  },
};
