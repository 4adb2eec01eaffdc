/**
 * The speech-to-text and text-to-speech wires of the providers with their own formats, as their documentation
 * describes them:
 * - Deepgram: POST /listen, the raw audio as the body, options in the query (`model`, `language`,
 *   `utterances=true`); `{metadata: {duration}, results: {channels: [{alternatives: [{transcript, words}]}],
 *   utterances}}`; errors `{err_code, err_msg, request_id}`; `Authorization: Token <key>`.
 * - AssemblyAI: POST /upload (raw) -> `{upload_url}`; POST /transcript `{audio_url, speech_model, language_code}`
 *   -> `{id, status: queued}`; GET /transcript/{id}: processing, then completed with `audio_duration` (seconds)
 *   and words in milliseconds; errors `{error}`; the bare key as `authorization`.
 * - ElevenLabs: POST /speech-to-text multipart (`file`, `model_id`, `language_code`); `{language_code, text,
 *   words: [{text, start, end, type: word | spacing}]}` in seconds, no duration; errors `{detail: {status,
 *   message}}`; `xi-api-key`.
 * The script's segments become timed words, a sentence per segment.
 * Text to speech:
 * - Deepgram Aura: POST /speak?model=<voice model>&encoding=mp3 (container, sample_rate, speed per format), JSON
 *   `{text}`, no voice field (the model is the voice); the audio as the answer, typed by its encoding.
 * - ElevenLabs: POST /text-to-speech/{voice_id}/stream?output_format=mp3_44100_128, JSON `{text, model_id,
 *   voice_settings?}`; the audio streamed back.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { assertDocumented, type MediaAnswer, type ScriptedTranscript, type SpeechWire, type TranscriptionWire } from '../media-wire.ts';

/** Each segment's words, spread evenly over it. */
function wordsOf(script: ScriptedTranscript): Array<{ text: string; start: number; end: number }> {
  return script.segments.flatMap((segment) => {
    const words = segment.text.split(' ');
    const step = (segment.end - segment.start) / words.length;
    return words.map((text, i) => ({ text, start: Number((segment.start + i * step).toFixed(3)), end: i === words.length - 1 ? segment.end : Number((segment.start + (i + 1) * step - 0.05).toFixed(3)) }));
  });
}

const json = (body: unknown, status = 200): MediaAnswer => ({ status, body: JSON.stringify(body) });

export const deepgramTranscriptionWire: TranscriptionWire = {
  answer(_req, script) {
    const words = wordsOf(script).map((w) => ({ word: w.text.toLowerCase().replace(/[.?]/g, ''), punctuated_word: w.text, start: w.start, end: w.end, confidence: 0.99 }));
    return json({
      metadata: { request_id: randomUUID(), duration: script.duration, channels: 1 },
      results: {
        channels: [{ alternatives: [{ transcript: script.text, confidence: 0.99, words }] }],
        utterances: script.segments.map((s) => ({ start: s.start, end: s.end, transcript: s.text, confidence: 0.99, channel: 0, id: randomUUID() })),
      },
    });
  },
  summarize: (req) => (req.path.endsWith('/listen') ? { model: req.query.model, audio: req.body, language: req.query.language ?? null, task: 'transcription' } : null),
  errorBody: (status, message) => json({ err_code: status === 429 ? 'TOO_MANY_REQUESTS' : 'Bad Request', err_msg: message, request_id: randomUUID() }, status),
  assertAuth: (req, credential) => assert.equal(req.headers.authorization, `Token ${credential}`),
};

export function assemblyAiTranscriptionWire(): TranscriptionWire {
  const polls = new Map<string, number>();
  return {
    answer(req, script) {
      if (req.path.endsWith('/upload')) return json({ upload_url: `https://cdn.assemblyai.com/upload/${randomUUID()}` });
      if (req.method === 'POST' && req.path.endsWith('/transcript')) {
        const id = randomUUID();
        polls.set(id, 0);
        return json({ id, status: 'queued', audio_url: req.json.audio_url, text: null });
      }
      const id = req.path.split('/').at(-1)!;
      const count = (polls.get(id) ?? 0) + 1;
      polls.set(id, count);
      if (count === 1) return json({ id, status: 'processing', text: null });
      const words = wordsOf(script).map((w) => ({ text: w.text, start: Math.round(w.start * 1000), end: Math.round(w.end * 1000), confidence: 0.98, speaker: null }));
      return json({ id, status: 'completed', text: script.text, audio_duration: script.duration, language_code: script.language, words });
    },
    summarize(req) {
      if (req.path.endsWith('/upload')) return { audio: req.body };
      if (req.method === 'POST' && req.path.endsWith('/transcript')) return { model: req.json.speech_model, language: req.json.language_code ?? null, task: 'transcription' };
      return null;
    },
    errorBody: (status, message) => json({ error: message }, status),
    assertAuth: (req, credential) => assert.equal(req.headers.authorization, credential),
  };
}

export const elevenLabsTranscriptionWire: TranscriptionWire = {
  answer(_req, script) {
    const words = wordsOf(script).flatMap((w, i, all) => [
      ...(i > 0 ? [{ text: ' ', start: all[i - 1]!.end, end: w.start, type: 'spacing', speaker_id: 'speaker_0', logprob: 0 }] : []),
      { text: w.text, start: w.start, end: w.end, type: 'word', speaker_id: 'speaker_0', logprob: -0.1 },
    ]);
    return json({ language_code: 'eng', language_probability: 0.99, text: script.text, words });
  },
  summarize: (req) => (req.form ? { model: req.form.fields.model_id, audio: req.form.file?.bytes ?? Buffer.alloc(0), language: req.form.fields.language_code ?? null, task: 'transcription' } : null),
  errorBody: (status, message) => json({ detail: { status: status === 429 ? 'too_many_concurrent_requests' : 'invalid_request', message } }, status),
  assertAuth: (req, credential) => assert.equal(req.headers['xi-api-key'], credential),
  reportsDuration: false,
};

/** Deepgram's encodings (and containers) by OpenAI's format names, and the Content-Type it answers each with. */
const DEEPGRAM_FORMATS: Record<string, { format: string; type: string }> = {
  'mp3/': { format: 'mp3', type: 'audio/mpeg' }, 'opus/ogg': { format: 'opus', type: 'audio/ogg' }, 'aac/': { format: 'aac', type: 'audio/aac' },
  'flac/': { format: 'flac', type: 'audio/flac' }, 'linear16/wav': { format: 'wav', type: 'audio/wav' }, 'linear16/none': { format: 'pcm', type: 'application/octet-stream' },
};
const deepgramFormat = (query: Record<string, string>) => DEEPGRAM_FORMATS[`${query.encoding ?? 'linear16'}/${query.container ?? (query.encoding === 'linear16' ? 'wav' : '')}`];

export const deepgramSpeechWire: SpeechWire = {
  answer: (req, chunks) => ({ headers: { 'content-type': deepgramFormat(req.query)?.type ?? 'application/octet-stream' }, body: chunks }),
  summarize(req) {
    if (!req.path.endsWith('/speak')) return null;
    // The body is the text alone; everything else (model, encoding, speed) is in the query.
    assertDocumented(req.json, ['text'], req.path);
    return { model: req.query.model, input: req.json?.text, format: deepgramFormat(req.query)?.format ?? `unknown ${req.url}` };
  },
  errorBody: deepgramTranscriptionWire.errorBody,
  assertAuth: deepgramTranscriptionWire.assertAuth,
  sendsVoice: false,
};

/** ElevenLabs' output_format families by OpenAI's format names; PCM comes untyped. */
const ELEVENLABS_FORMATS: Record<string, { format: string; type: string }> = {
  mp3: { format: 'mp3', type: 'audio/mpeg' }, opus: { format: 'opus', type: 'audio/opus' }, wav: { format: 'wav', type: 'audio/wav' }, pcm: { format: 'pcm', type: 'application/octet-stream' },
};
const elevenLabsFormat = (query: Record<string, string>) => ELEVENLABS_FORMATS[(query.output_format ?? 'mp3_44100_128').split('_')[0]!];

const ELEVENLABS_SPEECH_FIELDS = [
  'text', 'model_id', 'language_code', 'voice_settings', 'pronunciation_dictionary_locators', 'seed', 'previous_text', 'next_text',
  'previous_request_ids', 'next_request_ids', 'apply_text_normalization', 'apply_language_text_normalization',
];

export const elevenLabsSpeechWire: SpeechWire = {
  answer: (req, chunks) => ({ headers: { 'content-type': elevenLabsFormat(req.query)?.type ?? 'application/octet-stream' }, body: chunks }),
  summarize(req) {
    const voice = /\/text-to-speech\/([^/]+)\/stream$/.exec(req.path)?.[1];
    if (voice === undefined) return null;
    assertDocumented(req.json, ELEVENLABS_SPEECH_FIELDS, req.path);
    return { model: req.json?.model_id, input: req.json?.text, voice: decodeURIComponent(voice), format: elevenLabsFormat(req.query)?.format ?? `unknown ${req.url}` };
  },
  errorBody: elevenLabsTranscriptionWire.errorBody,
  assertAuth: elevenLabsTranscriptionWire.assertAuth,
};
