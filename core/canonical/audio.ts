/**
 * Audio in the canonical format: transcription and translation (speech to text), and speech (text to speech).
 *
 * A transcription's canonical result is always the full one (text, and duration and segments when the provider
 * gives them), whatever `response_format` the caller asked for: the ingress renders json, text, srt, vtt or
 * verbose_json from it, so every format is metered by the same audio seconds (peers let `text` skip metering).
 */

export const TRANSCRIPTION_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
export type TranscriptionFormat = (typeof TRANSCRIPTION_FORMATS)[number];

/** The audio of a request, read whole (at most 10 MB) before dispatch. */
export interface AudioInput {
  bytes: Buffer;
  filename: string;
  /** As the caller sent it, or guessed from the filename; application/octet-stream when neither says. */
  mimeType: string;
}

export interface TranscriptionRequest {
  model: string;
  audio: AudioInput;
  /** ISO 639-1; transcriptions only. */
  language?: string;
  prompt?: string;
  /** What the caller gets; translators always ask their provider for the fullest answer it has. */
  response_format: TranscriptionFormat;
  /** 0 to 1. */
  temperature?: number;
}

export interface CanonicalTranscriptionRequest {
  /** `translation`: the speech translated to English text. */
  modality: 'transcription' | 'translation';
  model: string;
  stream: false;
  body: TranscriptionRequest;
}

export interface TranscriptSegment {
  id: number;
  /** Seconds from the start of the audio. */
  start: number;
  end: number;
  text: string;
}

export interface TranscriptionResult {
  object: 'transcription';
  text: string;
  /** The spoken language as the provider names it (OpenAI: "english"; others an ISO code). */
  language?: string;
  /** Seconds of audio. */
  duration?: number;
  segments?: TranscriptSegment[];
  usage: AudioUsage;
}

/** What an audio request is billed by. */
export interface AudioUsage {
  /** Transcription and translation: seconds of audio heard. */
  audio_seconds?: number;
  /** Tokens, for providers that bill audio models by tokens and report them. */
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
}

/** Text to speech: the formats a speech answer may be asked in, and the content type each is sent with. */
export const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

export const SPEECH_CONTENT_TYPES: Readonly<Record<SpeechFormat, string>> = {
  mp3: 'audio/mpeg', opus: 'audio/opus', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm',
};

export interface SpeechRequest {
  model: string;
  /** 1 to 4096 characters. */
  input: string;
  /** The provider's voice identifier. */
  voice: string;
  response_format: SpeechFormat;
  /** 0.25 to 4.0; left out when the caller did not say (the provider's default, 1.0). */
  speed?: number;
}

export interface CanonicalSpeechRequest {
  modality: 'speech';
  model: string;
  stream: false;
  body: SpeechRequest;
}

/**
 * A speech answer: the provider's audio body, streamed to the caller as it arrives and never held whole. The
 * provider bills the whole input once it answers, so `usage` is known before the first byte.
 */
export interface SpeechResult {
  object: 'speech';
  contentType: string;
  audio: AsyncIterable<Uint8Array>;
  usage: SpeechUsage;
}

export interface SpeechUsage {
  /** Code points of the input: what text-to-speech is billed by. */
  characters: number;
}

/** Characters as providers bill them: code points, so an emoji is one, not two UTF-16 units. */
export function speechCharacters(input: string): number {
  let count = 0;
  for (const _ of input) count++;
  return count;
}
