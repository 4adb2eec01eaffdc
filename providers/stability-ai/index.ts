/**
 * Stability AI: image generation (v2beta Stable Image core, ultra and sd3; see image.ts), a bearer credential,
 * one image per call (the core makes n calls). Errors come as `{id, name, errors: [message]}`; a 403 named
 * `content_moderation` is the prompt refused, not the gateway's credential.
 */
import { defineProvider, type ProviderTarget } from '../../core/dispatch/provider.ts';
import { upstreamStatusError } from '../../core/dispatch/upstream-errors.ts';
import { GatewayError } from '../../core/errors.ts';
import { isRecord } from '../shared/transcripts.ts';
import { OUTPUT_FORMATS, stabilityImage } from './image.ts';

function stabilityError(status: number, body: unknown, target: ProviderTarget): GatewayError {
  const name = isRecord(body) && typeof body.name === 'string' ? body.name : undefined;
  const errors = isRecord(body) && Array.isArray(body.errors) ? body.errors.filter((e): e is string => typeof e === 'string') : [];
  const text = errors.length > 0 ? errors.join('; ') : typeof body === 'string' && body !== '' ? body.slice(0, 500) : `HTTP ${status}`;
  const message = name ? `${name}: ${text}` : text;
  const upstreamError = isRecord(body) ? body : undefined;
  if (name === 'content_moderation') {
    return new GatewayError('UPSTREAM_BAD_REQUEST', `${target.slug}: the request was refused by Stability's content moderation: ${text}`, { provider: target.slug, upstreamStatus: status, upstreamError });
  }
  return upstreamStatusError(target.slug, status, message, upstreamError);
}

export default defineProvider({
  slug: 'stability-ai',
  family: 'stability-ai',
  displayName: 'Stability AI',
  defaultBaseUrl: 'https://api.stability.ai/v2beta',
  configSchema: {
    type: 'object', additionalProperties: false,
    description: 'Stability AI options. The API key (apiKey) is sent as a bearer token. A model\'s upstreamModel picks the endpoint: core or stable-image-core, ultra or stable-image-ultra, or an sd3 model (sd3.5-large, sd3.5-large-turbo, sd3.5-medium, ...) sent to the sd3 endpoint as its `model`.',
    properties: {
      outputFormat: { type: 'string', enum: [...OUTPUT_FORMATS], default: 'png', description: 'output_format: the images\' encoding (sd3 models make png or jpeg only).' },
      negativePrompt: { type: 'string', maxLength: 10000, description: 'negative_prompt sent with every request: what the images should not show.' },
      seed: { type: 'integer', minimum: 0, maximum: 4294967294, description: 'seed sent with every request (0 or absent: random). A fixed seed makes the calls of a request for several images the same image.' },
    },
  },
  capabilities: { image: { maxImages: 1 } },
  image: stabilityImage,
  mapError: stabilityError,
});
