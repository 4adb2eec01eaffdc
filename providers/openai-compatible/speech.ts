/**
 * Text to speech on the OpenAI-compatible hosts that serve it: OpenAI's request (providers/openai/speech.ts) with
 * each host's documented differences as data: the formats it gives (each with the body fields asking for it),
 * the speed range it documents (none: it takes no speed), fields it always wants, and a last reshaping hook. A
 * format or speed the host cannot honour is refused before any I/O (providers/shared/speech.ts).
 */
import type { SpeechRequest } from '../../core/canonical/audio.ts';
import type { ProviderTarget, SpeechTranslator } from '../../core/dispatch/provider.ts';
import { createOpenAiSpeech } from '../openai/speech.ts';
import { speechFormat, speechSpeed, type SpeechFormatTable, type SpeedRange } from '../shared/speech.ts';

export interface CompatibleSpeech {
  /** The formats the host gives: the body fields replacing OpenAI's response_format for each. */
  formats: SpeechFormatTable<Record<string, unknown>>;
  /** The speed range the host documents; absent: no speed field (a speed other than 1 is refused). */
  speed?: SpeedRange;
  /** Fields sent with every request. */
  fixed?: Record<string, unknown>;
  /** Reshapes the body last (a host's own voice names, its own options). */
  body?(body: Record<string, unknown>, request: SpeechRequest, target: ProviderTarget): void;
}

/** `headers` are the entry's, as its chat sends them (providers/openai-compatible/index.ts). */
export function compatibleSpeech(spec: CompatibleSpeech, headers: (target: ProviderTarget) => Record<string, string>): SpeechTranslator {
  return createOpenAiSpeech({
    headers,
    body(body, request, target) {
      const format = speechFormat(spec.formats, request, target);
      const speed = speechSpeed(spec.speed, request, target);
      delete body.response_format;
      delete body.speed;
      Object.assign(body, format, spec.fixed, speed !== undefined ? { speed } : {});
      spec.body?.(body, request, target);
    },
  });
}

/** Every format OpenAI names, asked for by the same name. */
const asNamed = (...formats: Array<keyof CompatibleSpeech['formats']>): CompatibleSpeech['formats'] =>
  Object.fromEntries(formats.map((format) => [format, { response_format: format }]));

/**
 * Groq (POST /openai/v1/audio/speech): its API reference lists flac, mp3, mulaw, ogg and wav, but its speech
 * models (PlayAI, Orpheus) answer anything but wav with 400 "response_format must be one of [wav]": wav only,
 * so a caller's mp3 (OpenAI's default) may go to the model's next target. Speed 0.5 to 5.
 */
export const GROQ_SPEECH: CompatibleSpeech = { formats: asNamed('wav'), speed: { min: 0.5, max: 5 } };

/**
 * Together (POST /v1/audio/speech): response_format mp3, wav or raw; raw is PCM in `response_encoding` at
 * `sample_rate`, so OpenAI's pcm (16-bit little-endian, 24 kHz) is raw + pcm_s16le + 24000. `stream: true` would
 * answer server-sent events of base64 audio: always false, the audio bytes. No speed is documented.
 */
export const TOGETHER_SPEECH: CompatibleSpeech = {
  formats: { ...asNamed('mp3', 'wav'), pcm: { response_format: 'raw', response_encoding: 'pcm_s16le', sample_rate: 24000 } },
  fixed: { stream: false },
};

/**
 * SiliconFlow's system voices are named `<model>:<voice>` (FunAudioLLM/CosyVoice2-0.5B:alex), its uploaded ones
 * `speech:...`: a bare voice is taken as one of the model's own. `gain` (dB) comes from the provider's options.
 */
function siliconflowSpeechBody(body: Record<string, unknown>, request: SpeechRequest, target: ProviderTarget): void {
  if (!request.voice.includes(':')) body.voice = `${target.upstreamModel}:${request.voice}`;
  const gain = target.options.speechGain;
  if (typeof gain === 'number') body.gain = gain;
}

/**
 * SiliconFlow (POST /v1/audio/speech): response_format mp3, opus, wav or pcm; pcm at 24000 Hz as OpenAI's is
 * (its default is 44100); speed 0.25 to 4.
 */
export const SILICONFLOW_SPEECH: CompatibleSpeech = {
  formats: { ...asNamed('mp3', 'opus', 'wav'), pcm: { response_format: 'pcm', sample_rate: 24000 } },
  speed: { min: 0.25, max: 4 },
  body: siliconflowSpeechBody,
};
