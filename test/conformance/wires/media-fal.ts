/**
 * fal's queue as a media wire: POST /{model_id} with the model's input -> `{request_id, response_url, status_url,
 * cancel_url, status: IN_QUEUE}` (the URLs under the app, the first two segments); GET .../status walks IN_QUEUE
 * -> IN_PROGRESS (logs) -> COMPLETED; GET .../requests/{id} is the output: whisper `{text, chunks:
 * [{timestamp: [start, end], text}], inferred_languages}`, Kokoro `{audio: {url, content_type}}`, FLUX
 * `{images: [{url, content_type}]}`, the files on /kit-files/. Errors `{detail}`; `Authorization: Key <key>`.
 * Only the submit carries the caller's input, so only it is summarized, and its fields checked against the
 * model's documented input.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { assertDocumented, type ImageWire, type MediaAnswer, type MediaRequest, type ScriptedTranscript, type SpeechWire, type TranscriptionWire } from '../media-wire.ts';

const json = (body: unknown, status = 200): MediaAnswer => ({ status, body: JSON.stringify(body) });
const REQUEST = /^\/(.+?)\/requests\/([^/]+)(\/status)?$/;
const submitted = (req: MediaRequest) => req.method === 'POST' && !REQUEST.test(req.path);

/** The queue walk shared by every modality; `output` answers the response URL of a completed request. */
function queue(output: (input: Record<string, unknown>, files: string) => unknown) {
  const jobs = new Map<string, { input: Record<string, unknown>; polls: number }>();
  return (req: MediaRequest, files: string): MediaAnswer => {
    const match = REQUEST.exec(req.path);
    if (!match) {
      const id = randomUUID();
      jobs.set(id, { input: req.json ?? {}, polls: 0 });
      const base = `${files}/${req.path.slice(1).split('/').slice(0, 2).join('/')}/requests/${id}`;
      return json({ status: 'IN_QUEUE', queue_position: 0, request_id: id, response_url: base, status_url: `${base}/status`, cancel_url: `${base}/cancel` });
    }
    const job = jobs.get(match[2]!);
    if (!job) return json({ detail: 'Request not found' }, 404);
    if (!match[3]) return json(output(job.input, files));
    job.polls++;
    const status = job.polls === 1 ? 'IN_QUEUE' : job.polls === 2 ? 'IN_PROGRESS' : 'COMPLETED';
    return json({ status, request_id: match[2], response_url: `${files}${req.path.replace(/\/status$/, '')}`, logs: status === 'IN_QUEUE' ? null : [{ message: '50%|█████     |', level: 'INFO' }] });
  };
}

const WHISPER_FIELDS = ['audio_url', 'task', 'language', 'diarize', 'chunk_level', 'version', 'batch_size', 'prompt', 'num_speakers'];
const KOKORO_FIELDS = ['prompt', 'voice', 'speed'];
const FLUX_FIELDS = ['prompt', 'image_size', 'num_inference_steps', 'seed', 'guidance_scale', 'sync_mode', 'num_images', 'enable_safety_checker', 'output_format', 'acceleration'];

const errorBody = (status: number, message: string) => json({ detail: message }, status);
const assertAuth = (req: MediaRequest, credential: string) => assert.equal(req.headers.authorization, `Key ${credential}`);

export function falTranscriptionWire(): TranscriptionWire {
  let script: ScriptedTranscript | undefined;
  const walk = queue(() => ({
    text: script!.text,
    chunks: script!.segments.map((s) => ({ timestamp: [s.start, s.end], text: ` ${s.text}` })),
    inferred_languages: [script!.language],
  }));
  return {
    answer(req, given, files) {
      script = given;
      return walk(req, files);
    },
    summarize(req) {
      if (!submitted(req)) return null;
      assertDocumented(req.json, WHISPER_FIELDS, req.path);
      const url = String(req.json.audio_url);
      return { model: req.path.slice(1), audio: Buffer.from(url.slice(url.indexOf(',') + 1), 'base64'), language: req.json.language ?? null, task: req.json.task === 'translate' ? 'translation' : 'transcription' };
    },
    errorBody, assertAuth,
    reportsDuration: false,
  };
}

/**
 * Kokoro: `{prompt, voice, speed}` -> a WAV file, the one format it makes. fal's request names no format, so the
 * format reaching the provider is the model's own.
 */
export function falSpeechWire(): SpeechWire {
  const walk = queue((_input, files) => ({ audio: { url: `${files}/kit-files/speech.wav`, content_type: 'audio/wav' } }));
  return {
    answer: (req, _chunks, files) => walk(req, files),
    summarize(req) {
      if (!submitted(req)) return null;
      assertDocumented(req.json, KOKORO_FIELDS, req.path);
      return { model: req.path.slice(1), input: req.json.prompt, voice: req.json.voice, format: 'wav' };
    },
    // The kit's file host names every audio file audio/mpeg: the gateway passes the CDN's type on.
    contentType: () => 'audio/mpeg',
    errorBody, assertAuth,
  };
}

export function falImageWire(): ImageWire {
  const walk = queue((input, files) => ({
    images: Array.from({ length: Number(input.num_images ?? 1) }, () => ({ url: `${files}/kit-files/image.png`, content_type: 'image/png', width: 1, height: 1 })),
    prompt: input.prompt,
  }));
  return {
    answer: (req, _png, files) => walk(req, files),
    summarize(req) {
      if (!submitted(req)) return null;
      assertDocumented(req.json, FLUX_FIELDS, req.path);
      return { model: req.path.slice(1), prompt: req.json.prompt, n: req.json.num_images };
    },
    errorBody, assertAuth,
  };
}
