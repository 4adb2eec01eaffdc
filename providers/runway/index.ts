/**
 * Runway: images (POST /text_to_image) and video (POST /image_to_video, /text_to_video) as tasks read at GET
 * /tasks/{id} (see tasks.ts, image.ts, video.ts), with a bearer credential and `X-Runway-Version: 2024-11-06`.
 * One image per task: the core makes n tasks. Errors come as `{error: message}`, validation failures with
 * `issues` beside it.
 */
import { defineProvider, type ProviderTarget } from '../../core/dispatch/provider.ts';
import { upstreamStatusError } from '../../core/dispatch/upstream-errors.ts';
import type { GatewayError } from '../../core/errors.ts';
import { isRecord } from '../shared/transcripts.ts';
import { runwayImage } from './image.ts';
import { DEFAULT_POLL_INTERVAL_MS } from './tasks.ts';
import { runwayVideo } from './video.ts';

function runwayError(status: number, body: unknown, target: ProviderTarget): GatewayError {
  const error = isRecord(body) ? body.error : undefined;
  const message = typeof error === 'string' && error !== '' ? error
    : typeof body === 'string' && body !== '' ? body.slice(0, 500)
    : `HTTP ${status}`;
  return upstreamStatusError(target.slug, status, message, isRecord(body) ? body : undefined);
}

export default defineProvider({
  slug: 'runway',
  family: 'runway',
  displayName: 'Runway',
  defaultBaseUrl: 'https://api.dev.runwayml.com/v1',
  configSchema: {
    type: 'object', additionalProperties: false,
    description: 'Runway options. The API key (apiKey) is sent as a bearer token, with X-Runway-Version 2024-11-06. A model\'s upstreamModel is Runway\'s: gen4_image for images; gen4_turbo or gen3a_turbo (from a first frame), gen4.5, veo3, veo3.1 or veo3.1_fast for video.',
    properties: {
      pollIntervalMs: {
        type: 'integer', minimum: 1, default: DEFAULT_POLL_INTERVAL_MS,
        description: 'The wait before each read of an unfinished image task (GET /tasks/{id}); Runway asks for no more than one read every five seconds. A call gives up after 600 reads.',
      },
    },
  },
  capabilities: { image: { maxImages: 1 }, video: {} },
  image: runwayImage,
  video: runwayVideo,
  mapError: runwayError,
});
