/**
 * POST /v1/audio/transcriptions and /v1/audio/translations (capability `audio`). The body is a multipart form (as
 * the official `openai` client sends it) or JSON with base64 `file`, at most 10 MB, enforced while reading; or
 * JSON with `file_url`, fetched here through the outbound guard (audio-url.ts), within the same 10 MB. The
 * canonical answer is always the full transcription; the caller's response_format is rendered here
 * (transcript-formats.ts), so every format is metered by the same audio seconds.
 */
import type { CanonicalTranscriptionRequest, TranscriptionFormat, TranscriptionRequest, TranscriptionResult } from '../canonical/audio.ts';
import { GatewayError, validationError } from '../errors.ts';
import { compileRequestSchema } from '../validation.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import { jsonBodyReader } from './body.ts';
import { audioFromBase64, audioFromForm } from './audio-input.ts';
import { audioFromFileUrl } from './audio-url.ts';
import type { DispatchEndpoint, LocalEndpointDeps } from './endpoint.ts';
import { readForm, type Form } from './form.ts';
import { AUDIO_BODY_LIMIT, transcriptionRequestSchema, transcriptionResponseSchema, translationRequestSchema } from './schemas/audio.ts';
import { renderTranscript } from './transcript-formats.ts';

interface AudioFields {
  model: string;
  file?: string;
  file_url?: string;
  language?: string;
  prompt?: string;
  response_format: TranscriptionFormat;
  temperature?: number;
}

/** A form, as the JSON fields it stands for; its file part stays beside them. */
class FormBody {
  constructor(readonly form: Form) {}
}

async function readAudioBody(ctx: GatewayContext, limitBytes: number): Promise<unknown> {
  if (ctx.is('multipart/form-data')) return new FormBody(await readForm(ctx, limitBytes));
  return jsonBodyReader(limitBytes)(ctx);
}

/** Form fields are text: temperature is the one number among them. */
function formFields(form: Form): Record<string, unknown> {
  const fields: Record<string, unknown> = { ...form.fields };
  if (typeof fields.temperature === 'string' && fields.temperature.trim() !== '') {
    const value = Number(fields.temperature);
    fields.temperature = Number.isFinite(value) ? value : fields.temperature;
  }
  if (form.file && form.file.field !== 'file') throw validationError([{ path: `/${form.file.field}`, message: 'the audio part must be named file' }]);
  return fields;
}

function parser(modality: 'transcription' | 'translation') {
  const validate = compileRequestSchema<AudioFields>(modality === 'transcription' ? transcriptionRequestSchema : translationRequestSchema);
  return async (body: unknown, ctx: GatewayContext, deps: LocalEndpointDeps): Promise<CanonicalTranscriptionRequest> => {
    const form = body instanceof FormBody ? body.form : null;
    const fields = validate(form ? formFields(form) : body);
    const sources = [form?.file ? 'file' : fields.file !== undefined ? 'file' : null, fields.file_url !== undefined ? 'file_url' : null].filter(Boolean);
    if (sources.length !== 1) throw validationError([{ path: '/file', message: 'exactly one of file and file_url is required' }]);
    const audio = fields.file_url !== undefined
      ? await audioFromFileUrl(fields.file_url, deps.config.outbound, ctx.state.gw.signal)
      : form?.file ? audioFromForm(form.file) : audioFromBase64(fields.file!);
    const request: TranscriptionRequest = {
      model: fields.model, audio, response_format: fields.response_format ?? 'json',
      ...(fields.language !== undefined ? { language: fields.language } : {}),
      ...(fields.prompt !== undefined ? { prompt: fields.prompt } : {}),
      ...(fields.temperature !== undefined ? { temperature: fields.temperature } : {}),
    };
    return { modality, model: fields.model, stream: false, body: request };
  };
}

function respond(ctx: GatewayContext): void {
  const gw = ctx.state.gw;
  const result = gw.result as TranscriptionResult | undefined;
  const request = gw.canonical as CanonicalTranscriptionRequest | undefined;
  if (result?.object !== 'transcription' || !request) throw new GatewayError('INTERNAL_ERROR', 'The pipeline answered an audio request with another kind of answer');
  const rendered = renderTranscript(result, request.body.response_format, request.modality === 'translation' ? 'translate' : 'transcribe');
  ctx.status = 200;
  ctx.type = rendered.contentType;
  ctx.body = rendered.body;
}

const described = {
  kind: 'dispatch', method: 'POST', capability: 'audio', errorEnvelope: 'canonical', bodyLimitBytes: AUDIO_BODY_LIMIT,
  readBody: readAudioBody, respond,
} as const;

export const transcriptionsEndpoint: DispatchEndpoint = {
  ...described,
  path: '/v1/audio/transcriptions',
  summary: 'Transcribe audio (OpenAI wire format): a multipart form with the part file, or JSON with base64 file or file_url.',
  description: 'At most 10 MB (413 past it, while reading). file_url is fetched by the gateway with the outbound rules (no private, loopback or link-local address unless allow-listed in outbound.allowedAddresses; https unless outbound.allowHttp; up to 3 redirects, each checked; 10 MB and 30 s). language (ISO 639-1), prompt, response_format (json, text, srt, verbose_json, vtt; every format is metered by the audio seconds), temperature 0-1.',
  requestSchema: transcriptionRequestSchema,
  responses: { '200': { description: 'The transcription in the asked format.', schema: transcriptionResponseSchema } },
  parse: parser('transcription'),
};

export const translationsEndpoint: DispatchEndpoint = {
  ...described,
  path: '/v1/audio/translations',
  summary: 'Translate speech to English text (OpenAI wire format): a multipart form with the part file, or JSON with base64 file or file_url.',
  description: 'As transcriptions, without language.',
  requestSchema: translationRequestSchema,
  responses: { '200': { description: 'The English text in the asked format.', schema: transcriptionResponseSchema } },
  parse: parser('translation'),
};
