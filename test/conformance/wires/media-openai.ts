/**
 * OpenAI's media wire formats, as the media kit's fake speaks them: POST /audio/transcriptions and
 * /audio/translations (a multipart form, `file`; verbose_json with duration and segments, or json text only),
 * POST /audio/speech (JSON; the audio streamed back), POST /images/generations (JSON; data[] of url or
 * b64_json). Errors `{error: {message, type, code}}`. The OpenAI-compatible providers and Azure use the same
 * shapes under their own paths.
 */
import assert from 'node:assert/strict';
import { assertDocumented, type ImageWire, type MediaAnswer, type MediaRequest, type ScriptedTranscript, type SpeechWire, type TranscriptionWire } from '../media-wire.ts';

export const openAiMediaError = (status: number, message: string): MediaAnswer => ({
  status, body: JSON.stringify({ error: { message, type: status === 429 ? 'rate_limit_error' : 'invalid_request_error', code: null } }),
});

const bearer = (req: MediaRequest, credential: string) => assert.equal(req.headers.authorization, `Bearer ${credential}`);

export interface OpenAiMediaOptions {
  /** How the credential is sent (default Bearer). */
  assertAuth?(req: MediaRequest, credential: string): void;
  /** The JSON body's fields the provider documents (default OpenAI's): the kit asserts no other is sent. */
  documented?: readonly string[];
  /** The model as the request names it; Azure's is in the path (default: the form's or body's `model`). */
  modelOf?(req: MediaRequest): string | undefined;
}

export function openAiTranscriptionWire(options: OpenAiMediaOptions & { verbose?: boolean; answer?: (script: ScriptedTranscript, req: MediaRequest) => unknown } = {}): TranscriptionWire {
  const verbose = options.verbose ?? true;
  return {
    answer(req, script) {
      if (options.answer) return { body: JSON.stringify(options.answer(script, req)) };
      const asked = req.form?.fields.response_format;
      if (!verbose || asked !== 'verbose_json') return { body: JSON.stringify({ text: script.text }) };
      return {
        body: JSON.stringify({
          task: req.path.endsWith('/translations') ? 'translate' : 'transcribe', language: 'english', duration: script.duration, text: script.text,
          segments: script.segments.map((s, id) => ({ id, seek: 0, start: s.start, end: s.end, text: ` ${s.text}`, tokens: [1, 2], temperature: 0, avg_logprob: -0.2, compression_ratio: 1.1, no_speech_prob: 0.01 })),
        }),
      };
    },
    summarize(req) {
      if (!req.form) return null;
      return {
        model: options.modelOf?.(req) ?? req.form.fields.model, audio: req.form.file?.bytes ?? Buffer.alloc(0), language: req.form.fields.language ?? null,
        task: req.path.includes('/audio/translations') ? 'translation' : 'transcription',
      };
    },
    errorBody: openAiMediaError,
    assertAuth: options.assertAuth ?? bearer,
    reportsDuration: verbose,
    reportsSegments: verbose,
  };
}

/** The audio's Content-Type as OpenAI answers each format. */
const SPEECH_TYPES: Record<string, string> = { mp3: 'audio/mpeg', opus: 'audio/opus', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm' };

/** OpenAI's documented request fields (its API reference). */
export const OPENAI_SPEECH_FIELDS = ['model', 'input', 'voice', 'response_format', 'speed', 'instructions', 'stream_format'] as const;
export const OPENAI_IMAGE_FIELDS = [
  'model', 'prompt', 'n', 'size', 'quality', 'style', 'response_format', 'user', 'background', 'moderation', 'output_compression', 'output_format', 'partial_images', 'stream',
] as const;

export interface OpenAiSpeechOptions extends OpenAiMediaOptions {
  /** The voice as the provider names it, back to the caller's (SiliconFlow qualifies it with the model). */
  voiceOf?(req: MediaRequest): string;
  /** The format asked for, by OpenAI's name (default: response_format). */
  formatOf?(req: MediaRequest): string;
}

export function openAiSpeechWire(options: OpenAiSpeechOptions = {}): SpeechWire {
  const formatOf = options.formatOf ?? ((req: MediaRequest) => req.json.response_format);
  return {
    answer: (req, chunks) => ({ headers: { 'content-type': SPEECH_TYPES[formatOf(req)] ?? 'application/octet-stream' }, body: chunks }),
    summarize(req) {
      if (!req.json) return null;
      assertDocumented(req.json, options.documented ?? OPENAI_SPEECH_FIELDS, req.path);
      return { model: options.modelOf?.(req) ?? req.json.model, input: req.json.input, voice: options.voiceOf?.(req) ?? req.json.voice, format: formatOf(req) };
    },
    errorBody: openAiMediaError,
    assertAuth: options.assertAuth ?? bearer,
  };
}

export interface OpenAiImageOptions extends OpenAiMediaOptions {
  /**
   * `asked` (default): base64 when response_format asks for it (`b64`: the values asking for it, default
   * b64_json), else URLs; `bytes`: always base64 (hosts answering b64_json only); `urls`: always a URL.
   */
  answers?: 'asked' | 'urls' | 'bytes';
  b64?: readonly string[];
  /** Base64 sent as a whole data URL (xAI). */
  dataUrl?: boolean;
}

export function openAiImageWire(options: OpenAiImageOptions = {}): ImageWire {
  const answers = options.answers ?? 'asked';
  const b64Names = options.b64 ?? ['b64_json'];
  return {
    answer(req, png, files) {
      const n = typeof req.json?.n === 'number' ? req.json.n : 1;
      const b64 = answers === 'bytes' || (answers === 'asked' && b64Names.includes(req.json?.response_format));
      const bytes = options.dataUrl ? `data:image/png;base64,${png.toString('base64')}` : png.toString('base64');
      const data = Array.from({ length: n }, () => (b64 ? { b64_json: bytes } : { url: `${files}/kit-files/image.png` }));
      return { body: JSON.stringify({ created: 1_700_000_000, data }) };
    },
    summarize(req) {
      if (!req.json) return null;
      assertDocumented(req.json, options.documented ?? OPENAI_IMAGE_FIELDS, req.path);
      return { model: options.modelOf?.(req) ?? req.json.model, prompt: req.json.prompt, n: req.json.n ?? 1 };
    },
    errorBody: openAiMediaError,
    assertAuth: options.assertAuth ?? bearer,
  };
}
