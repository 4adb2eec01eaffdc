/**
 * Replicate's predictions wire for the media kit (replicate.com/docs/reference/http): POST
 * /v1/models/{owner}/{name}/predictions {input} with `Authorization: Bearer <token>` -> a prediction {id, status:
 * starting, urls: {get, cancel}}; GET urls.get answers processing (its logs a tqdm bar) and then succeeded with
 * the output. Outputs as the models give them: openai/whisper {transcription, segments, detected_language,
 * translation}, MiniMax speech the audio file's URL, FLUX a list of num_outputs image URLs; the files are the
 * kit's (/kit-files/). Errors are problem details {title, detail, status}.
 */
import assert from 'node:assert/strict';
import { assertDocumented, type ImageWire, type MediaAnswer, type MediaRequest, type SpeechWire, type TranscriptionWire } from '../media-wire.ts';

/** The input fields each model's schema documents (replicate.com/{owner}/{name}/api). */
const WHISPER_FIELDS = ['audio', 'model', 'transcription', 'translate', 'language', 'temperature', 'patience', 'suppress_tokens', 'initial_prompt', 'condition_on_previous_text', 'temperature_increment_on_fallback', 'compression_ratio_threshold', 'logprob_threshold', 'no_speech_threshold'];
const MINIMAX_SPEECH_FIELDS = ['text', 'voice_id', 'speed', 'volume', 'pitch', 'emotion', 'english_normalization', 'sample_rate', 'bitrate', 'audio_format', 'channel', 'subtitle_enable', 'language_boost'];
const FLUX_SCHNELL_FIELDS = ['prompt', 'aspect_ratio', 'num_outputs', 'num_inference_steps', 'seed', 'output_format', 'output_quality', 'disable_safety_checker', 'go_fast', 'megapixels'];

/** A creation's body is {input} (the model in the path); its input names only the model's fields. */
function checked(req: MediaRequest, fields: readonly string[]): Record<string, any> {
  assertDocumented(req.json, ['input'], req.path);
  assertDocumented(req.json.input, fields, req.path);
  return req.json.input;
}

const json = (body: unknown, status = 200): MediaAnswer => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

const replicateError = (status: number, message: string): MediaAnswer => ({
  status, headers: { 'content-type': 'application/problem+json' },
  body: JSON.stringify({ title: status === 429 ? 'Request was throttled' : 'Invalid input', detail: message, status }),
});

const bearer = (req: MediaRequest, credential: string) => assert.equal(req.headers.authorization, `Bearer ${credential}`);

const creation = /^\/v1\/models\/([^/]+)\/([^/]+)\/predictions$/;

/** The model a creation names, or undefined for a request that creates nothing (a poll). */
const modelOf = (req: MediaRequest): string | undefined => {
  const match = req.method === 'POST' ? creation.exec(req.path) : null;
  return match ? `${match[1]}/${match[2]}` : undefined;
};

/** Creation -> starting; each prediction's first poll -> processing at 50%; the next -> succeeded with `output`. */
function predictions(output: (input: Record<string, any>, files: string) => unknown): (req: MediaRequest, files: string) => MediaAnswer {
  const made = new Map<string, { input: Record<string, any>; polls: number; urls: { get: string; cancel: string } }>();
  return (req, files) => {
    const model = modelOf(req);
    if (model) {
      const id = `kit${made.size + 1}`;
      const urls = { get: `${files}/v1/predictions/${id}`, cancel: `${files}/v1/predictions/${id}/cancel` };
      made.set(id, { input: req.json.input, polls: 0, urls });
      return json({ id, model, version: 'hidden', input: req.json.input, logs: '', output: null, error: null, status: 'starting', created_at: '2025-06-15T12:00:00Z', urls }, 201);
    }
    const id = req.path.split('/').at(-1)!;
    const prediction = made.get(id);
    if (!prediction) return replicateError(404, 'The requested resource could not be found.');
    prediction.polls++;
    const base = { id, status: 'processing', input: prediction.input, urls: prediction.urls, error: null, output: null, logs: ' 50%|#####     | 2/4 [00:01<00:01,  2.00it/s]\n' };
    if (prediction.polls === 1) return json(base);
    return json({ ...base, status: 'succeeded', output: output(prediction.input, files), logs: `${base.logs}100%|##########| 4/4\n`, metrics: { predict_time: 1.2 } });
  };
}

export function replicateTranscriptionWire(): TranscriptionWire {
  let answer: ((req: MediaRequest, files: string) => MediaAnswer) | undefined;
  return {
    answer(req, script, files) {
      answer ??= predictions((input) => ({
        transcription: ` ${script.text}`,
        segments: script.segments.map((s, id) => ({ id, seek: 0, start: s.start, end: s.end, text: ` ${s.text}`, tokens: [1, 2], temperature: 0, avg_logprob: -0.2, compression_ratio: 1.1, no_speech_prob: 0.01 })),
        detected_language: 'english',
        translation: input.translate ? ` ${script.text}` : null,
        txt_file: null, srt_file: null,
      }));
      return answer(req, files);
    },
    summarize(req) {
      const model = modelOf(req);
      if (!model) return null;
      const input = checked(req, WHISPER_FIELDS);
      const audio = String(input.audio ?? '');
      return { model, audio: Buffer.from(audio.slice(audio.indexOf(',') + 1), 'base64'), language: input.language ?? null, task: input.translate ? 'translation' : 'transcription' };
    },
    errorBody: replicateError,
    assertAuth: bearer,
    // Whisper gives segments but no duration: the last segment's end is what is metered.
    reportsDuration: false,
  };
}

export function replicateSpeechWire(): SpeechWire {
  const answer = predictions((_input, files) => `${files}/kit-files/speech`);
  return {
    answer: (req, _chunks, files) => answer(req, files),
    summarize: (req) => {
      const model = modelOf(req);
      if (!model) return null;
      const input = checked(req, MINIMAX_SPEECH_FIELDS);
      return { model, input: input.text, voice: input.voice_id, format: input.audio_format };
    },
    errorBody: replicateError,
    assertAuth: bearer,
  };
}

export function replicateImageWire(): ImageWire {
  const answer = predictions((input, files) => Array.from({ length: input.num_outputs ?? 1 }, () => `${files}/kit-files/image.png`));
  return {
    answer: (req, _png, files) => answer(req, files),
    summarize: (req) => {
      const model = modelOf(req);
      if (!model) return null;
      const input = checked(req, FLUX_SCHNELL_FIELDS);
      return { model, prompt: input.prompt, n: input.num_outputs ?? 1 };
    },
    errorBody: replicateError,
    assertAuth: bearer,
  };
}
