/** The shape of POST /v1/video/generations and of the video job, validated and documented (JSON Schema and OpenAPI 3.0). */
import { VIDEO_STATUSES } from '../../canonical/video.ts';
import type { JsonSchema } from '../../json-schema.ts';

/** Room for a first frame sent as a data: URI; a prompt alone is a few KB. */
export const VIDEO_BODY_LIMIT = 10 * 1024 * 1024;

/** Out-of-range values are refused, never clamped; a value a provider cannot take refuses that provider (400 CAPABILITY_NOT_SUPPORTED). */
export const videoRequestSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['model', 'prompt'],
  properties: {
    model: { type: 'string', minLength: 1, description: 'A model id configured in pipelines.yaml.' },
    prompt: { type: 'string', minLength: 1, maxLength: 4000, description: 'What the video shows, 1 to 4000 characters.' },
    seconds: { type: 'integer', minimum: 1, maximum: 60, description: 'Length asked, 1 to 60 seconds; the provider\'s default when left out. A provider takes the lengths it supports (OpenAI: 4, 8 or 12).' },
    size: { type: 'string', pattern: '^[1-9][0-9]{1,4}x[1-9][0-9]{1,4}$', description: 'WIDTHxHEIGHT in pixels, e.g. 1280x720.' },
    aspect_ratio: { type: 'string', pattern: '^[1-9][0-9]?:[1-9][0-9]?$', description: 'e.g. 16:9 or 9:16, for providers that take a ratio rather than a size.' },
    image: { type: 'string', pattern: '^(https://[^\\s]+|data:image/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=]+)$', description: 'A first frame (image to video): an https URL or a base64 data: URI of an image.' },
    negative_prompt: { type: 'string', minLength: 1, maxLength: 4000, description: 'What the video should not show, for providers that take one.' },
    seed: { type: 'integer', minimum: 0, maximum: 4294967295, description: 'For providers that take one.' },
  },
};

export const videoJobSchema: JsonSchema = {
  type: 'object', required: ['id', 'object', 'model', 'status', 'progress', 'prompt', 'created_at', 'completed_at', 'url', 'seconds', 'error'],
  properties: {
    id: { type: 'string', description: '`video-<uuid>`.' },
    object: { type: 'string', enum: ['video.generation'] },
    model: { type: 'string', description: 'The model the caller asked for.' },
    status: { type: 'string', enum: [...VIDEO_STATUSES], description: 'queued -> in_progress -> completed or failed.' },
    progress: { type: 'number', minimum: 0, maximum: 100, description: 'Percent, as the provider reports it (100 once completed).' },
    prompt: { type: 'string' },
    created_at: { type: 'integer', description: 'Seconds since the epoch.' },
    completed_at: { type: 'integer', nullable: true, description: 'When the job ended (completed or failed).' },
    url: { type: 'string', nullable: true, description: 'Completed: where to fetch the video: the provider\'s public URL, or this job\'s content route when the provider\'s result needs its credential.' },
    seconds: { type: 'number', nullable: true, description: 'Completed: seconds of video made, as billed.' },
    error: {
      type: 'object', nullable: true, required: ['code', 'message'], description: 'Failed: why.',
      properties: { code: { type: 'string' }, message: { type: 'string' } },
    },
  },
};
