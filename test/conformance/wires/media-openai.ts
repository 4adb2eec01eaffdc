/**
 * OpenAI's media wire formats, as the media kit's fake speaks them: POST /audio/transcriptions and
 * /audio/translations (a multipart form, `file`; verbose_json with duration and segments, or json text only),
 * POST /audio/speech (JSON; the audio streamed back), POST /images/generations (JSON; data[] of url or
 * b64_json). Errors `{error: {message, type, code}}`. The OpenAI-compatible providers and Azure use the same
 * shapes under their own paths.
 */
import assert from 'node:assert/strict';
import type { ImageWire, MediaAnswer, MediaRequest, ScriptedTranscript, SpeechWire, TranscriptionWire } from '../media-wire.ts';

export const openAiMediaError = (status: number, message: string): MediaAnswer => ({
  status, body: JSON.stringify({ error: { message, type: status === 429 ? 'rate_limit_error' : 'invalid_request_error', code: null } }),
});

const bearer = (req: MediaRequest, credential: string) => assert.equal(req.headers.authorization, `Bearer ${credential}`);

export interface OpenAiMediaOptions {
  /** How the credential is sent (default Bearer). */
  assertAuth?(req: MediaRequest, credential: string): void;
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

export function openAiSpeechWire(options: OpenAiMediaOptions = {}): SpeechWire {
  return {
    answer: (_req, chunks) => ({ headers: { 'content-type': 'audio/mpeg' }, body: chunks }),
    summarize: (req) => (req.json ? { model: options.modelOf?.(req) ?? req.json.model, input: req.json.input, voice: req.json.voice } : null),
    errorBody: openAiMediaError,
    assertAuth: options.assertAuth ?? bearer,
  };
}

/** `bytes`: the provider answers b64_json when asked (default); `urls`: always a URL. */
export function openAiImageWire(options: OpenAiMediaOptions & { answers?: 'asked' | 'urls' | 'bytes' } = {}): ImageWire {
  const answers = options.answers ?? 'asked';
  return {
    answer(req, png, files) {
      const n = typeof req.json?.n === 'number' ? req.json.n : 1;
      const b64 = answers === 'bytes' || (answers === 'asked' && req.json?.response_format === 'b64_json');
      const data = Array.from({ length: n }, () => (b64 ? { b64_json: png.toString('base64') } : { url: `${files}/kit-files/image.png` }));
      return { body: JSON.stringify({ created: 1_700_000_000, data }) };
    },
    summarize: (req) => (req.json ? { model: options.modelOf?.(req) ?? req.json.model, prompt: req.json.prompt, n: req.json.n ?? 1 } : null),
    errorBody: openAiMediaError,
    assertAuth: options.assertAuth ?? bearer,
  };
}
