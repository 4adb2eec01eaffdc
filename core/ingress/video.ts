/**
 * POST /v1/video/generations (capability `video-generation`): starts a video generation job on a provider and
 * answers 200 with the job (status queued or in_progress), as OpenAI's video API answers its create. The job is
 * then followed by the `video.poll` sweep and read with GET /v1/video/generations/:id (core/api/video.ts). The
 * request itself costs nothing: the job is metered once, when it ends, by the seconds of video made.
 */
import type { CanonicalVideoRequest, VideoJob, VideoRequest } from '../canonical/video.ts';
import { GatewayError } from '../errors.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import { compileRequestSchema } from '../validation.ts';
import type { DispatchEndpoint } from './endpoint.ts';
import { VIDEO_BODY_LIMIT, videoJobSchema, videoRequestSchema } from './schemas/video.ts';

const validateVideo = compileRequestSchema<VideoRequest>(videoRequestSchema);

export function parseVideo(body: unknown): CanonicalVideoRequest {
  const fields = validateVideo(body);
  const request: VideoRequest = { model: fields.model, prompt: fields.prompt };
  for (const name of ['seconds', 'size', 'aspect_ratio', 'image', 'negative_prompt', 'seed'] as const) {
    if (fields[name] !== undefined) Object.assign(request, { [name]: fields[name] });
  }
  return { modality: 'video', model: fields.model, stream: false, body: request };
}

function respond(ctx: GatewayContext): void {
  const result = ctx.state.gw.result as VideoJob | undefined;
  if (result?.object !== 'video.generation') throw new GatewayError('INTERNAL_ERROR', 'The pipeline answered a video request with another kind of answer');
  ctx.status = 200;
  ctx.body = result;
}

export const videoGenerationsEndpoint: DispatchEndpoint = {
  kind: 'dispatch', method: 'POST', path: '/v1/video/generations', capability: 'video-generation', errorEnvelope: 'canonical', bodyLimitBytes: VIDEO_BODY_LIMIT,
  summary: 'Start a video generation job: answered at once with the job (queued or in_progress); poll GET /v1/video/generations/{id}.',
  description: 'prompt 1-4000 characters, seconds 1-60 (integer), size WIDTHxHEIGHT, aspect_ratio W:H, image (first frame: https URL or data: URI), negative_prompt, seed. Values out of range are refused, never clamped; a value the provider cannot take refuses that provider (400 CAPABILITY_NOT_SUPPORTED) or moves on to the next target. The job is metered once it ends, by the seconds of video made (pricing.videoSecond).',
  requestSchema: videoRequestSchema,
  responses: { '200': { description: 'The new job.', schema: videoJobSchema } },
  parse: parseVideo,
  respond,
};
