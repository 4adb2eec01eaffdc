/**
 * POST /v1/images/generations (capability `images`), OpenAI's wire format: a JSON body (at most 1 MB) answered with
 * {created, data[]}. Metered by the images made, priced at the size and quality asked (pricing.image).
 */
import type { CanonicalImageRequest, ImageResponseFormat, ImageResult } from '../canonical/image.ts';
import { GatewayError } from '../errors.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import { compileRequestSchema } from '../validation.ts';
import type { DispatchEndpoint } from './endpoint.ts';
import { IMAGES_BODY_LIMIT, imagesRequestSchema, imagesResponseSchema } from './schemas/images.ts';

interface ImageFields {
  model: string;
  prompt: string;
  n?: number;
  size?: string;
  quality?: string;
  style?: string;
  response_format?: ImageResponseFormat;
  user?: string;
}

const validateImages = compileRequestSchema<ImageFields>(imagesRequestSchema);

export function parseImages(body: unknown): CanonicalImageRequest {
  const { model, prompt, n, size, quality, style, response_format: format, user } = validateImages(body);
  return {
    modality: 'image', model, stream: false,
    body: {
      model, prompt, n: n ?? 1, response_format: format ?? 'url',
      ...(size !== undefined ? { size } : {}), ...(quality !== undefined ? { quality } : {}),
      ...(style !== undefined ? { style } : {}), ...(user !== undefined ? { user } : {}),
    },
  };
}

function respond(ctx: GatewayContext): void {
  const result = ctx.state.gw.result as ImageResult | undefined;
  if (result?.object !== 'image') throw new GatewayError('INTERNAL_ERROR', 'The pipeline answered an image request with another kind of answer');
  ctx.status = 200;
  ctx.body = { created: result.created, data: result.data };
}

export const imagesEndpoint: DispatchEndpoint = {
  kind: 'dispatch', method: 'POST', path: '/v1/images/generations', capability: 'images', errorEnvelope: 'canonical', bodyLimitBytes: IMAGES_BODY_LIMIT,
  summary: 'Image generation (OpenAI wire format).',
  description: 'prompt 1-4000 characters, n 1-10, size WIDTHxHEIGHT, quality and style as the model takes them, response_format url (default) or b64_json; values out of range are refused, never clamped. Progress of providers that report it: the /image-progress WebSocket.',
  requestSchema: imagesRequestSchema,
  responses: { '200': { description: 'The images, in the asked format.', schema: imagesResponseSchema } },
  parse: parseImages,
  respond,
};
