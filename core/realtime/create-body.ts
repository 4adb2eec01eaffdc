/** The create body of POST /v1/realtime/sessions (the spec's table), checked field by field. */
import { validationError, type ValidationIssue } from '../errors.ts';
import type { JsonSchema } from '../json-schema.ts';
import type { RealtimeSettings } from '../store/realtime-sessions.ts';

export const AUDIO_FORMATS = ['pcm16', 'g711_ulaw', 'g711_alaw'] as const;
const MODALITIES = [['text'], ['audio'], ['text', 'audio']];
export const IDLE_TIMEOUT = { default: 600, min: 30, max: 3600 } as const;
const MAX_METADATA_BYTES = 16 * 1024;

export interface RealtimeCreate {
  provider: string;
  model: string;
  settings: RealtimeSettings;
  idleTimeoutSeconds: number;
  metadata: Record<string, unknown> | null;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

export const realtimeCreateSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['provider', 'model', 'modalities'],
  properties: {
    provider: { type: 'string', description: 'Provider slug (openai).' },
    model: { type: 'string' },
    modalities: { type: 'array', items: { type: 'string', enum: ['text', 'audio'] }, description: '[text], [audio] or [text, audio].' },
    voice: { type: 'string' },
    instructions: { type: 'string' },
    input_audio_format: { type: 'string', enum: [...AUDIO_FORMATS] },
    output_audio_format: { type: 'string', enum: [...AUDIO_FORMATS] },
    tools: { type: 'array', items: { type: 'object' }, description: 'Function or built-in tools.' },
    idle_timeout_seconds: { type: 'integer', minimum: IDLE_TIMEOUT.min, maximum: IDLE_TIMEOUT.max, default: IDLE_TIMEOUT.default },
    metadata: { type: 'object', nullable: true },
  },
};

export function createFields(body: unknown): RealtimeCreate {
  if (!isObject(body)) throw validationError([{ path: '', message: 'must be an object' }]);
  const issues: ValidationIssue[] = [];
  const known = new Set(Object.keys(realtimeCreateSchema.properties as object));
  for (const name of Object.keys(body)) if (!known.has(name)) issues.push({ path: `/${name}`, message: 'is not a field of a realtime session' });
  if (typeof body.provider !== 'string' || body.provider === '') issues.push({ path: '/provider', message: 'must be a provider slug' });
  if (typeof body.model !== 'string' || body.model === '') issues.push({ path: '/model', message: 'must be a model id' });
  const modalities = body.modalities;
  if (!Array.isArray(modalities) || !MODALITIES.some((m) => m.length === modalities.length && m.every((x, i) => x === modalities[i]))) {
    issues.push({ path: '/modalities', message: 'must be ["text"], ["audio"] or ["text", "audio"]' });
  }
  for (const field of ['voice', 'instructions'] as const) {
    if (body[field] !== undefined && typeof body[field] !== 'string') issues.push({ path: `/${field}`, message: 'must be a string' });
  }
  for (const field of ['input_audio_format', 'output_audio_format'] as const) {
    if (body[field] !== undefined && !(AUDIO_FORMATS as readonly unknown[]).includes(body[field])) issues.push({ path: `/${field}`, message: `must be one of ${AUDIO_FORMATS.join(', ')}` });
  }
  if (body.tools !== undefined && (!Array.isArray(body.tools) || !body.tools.every(isObject))) issues.push({ path: '/tools', message: 'must be an array of tool objects' });
  const idle = body.idle_timeout_seconds ?? IDLE_TIMEOUT.default;
  if (!Number.isInteger(idle) || (idle as number) < IDLE_TIMEOUT.min || (idle as number) > IDLE_TIMEOUT.max) {
    issues.push({ path: '/idle_timeout_seconds', message: `must be an integer from ${IDLE_TIMEOUT.min} to ${IDLE_TIMEOUT.max}` });
  }
  const metadata = body.metadata;
  if (metadata !== undefined && metadata !== null) {
    if (!isObject(metadata)) issues.push({ path: '/metadata', message: 'must be an object' });
    else if (Buffer.byteLength(JSON.stringify(metadata)) > MAX_METADATA_BYTES) issues.push({ path: '/metadata', message: `must be at most ${MAX_METADATA_BYTES} bytes as JSON` });
  }
  if (issues.length > 0) throw validationError(issues);
  const settings: RealtimeSettings = { modalities: modalities as string[] };
  for (const field of ['voice', 'instructions', 'input_audio_format', 'output_audio_format'] as const) {
    if (typeof body[field] === 'string') settings[field] = body[field] as string;
  }
  if (Array.isArray(body.tools)) settings.tools = body.tools;
  return {
    provider: body.provider as string, model: body.model as string, settings, idleTimeoutSeconds: idle as number,
    metadata: (metadata ?? null) as Record<string, unknown> | null,
  };
}
