/** The shape of POST /v1/images/generations and its answer, validated and documented. */
import { IMAGE_RESPONSE_FORMATS } from '../../canonical/image.ts';
import type { JsonSchema } from '../../json-schema.ts';

/** The prompt is at most 4000 characters: 1 MB is room for any honest body. */
export const IMAGES_BODY_LIMIT = 1024 * 1024;

/** Out-of-range values are refused, never clamped. */
export const imagesRequestSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['model', 'prompt'],
  properties: {
    model: { type: 'string', minLength: 1, description: 'A model id configured in pipelines.yaml.' },
    prompt: { type: 'string', minLength: 1, maxLength: 4000, description: 'What to draw, 1 to 4000 characters.' },
    n: { type: 'integer', minimum: 1, maximum: 10, default: 1, description: 'Images to make, 1 to 10; a provider that makes fewer per call gets several calls.' },
    size: { type: 'string', pattern: '^[1-9][0-9]{1,4}x[1-9][0-9]{1,4}$', description: 'WIDTHxHEIGHT, e.g. 1024x1024; which sizes a model takes is its provider\'s rule.' },
    quality: { type: 'string', minLength: 1, maxLength: 64, description: 'Model-dependent (standard, hd, low, medium, high, auto, ...).' },
    style: { type: 'string', minLength: 1, maxLength: 64, description: 'Model-dependent (vivid, natural, a provider\'s style preset, ...).' },
    response_format: {
      type: 'string', enum: [...IMAGE_RESPONSE_FORMATS], default: 'url',
      description: 'url (default) or b64_json. A provider that answers with bytes gives a data: URL for url; one that answers with a URL is downloaded by the gateway for b64_json.',
    },
    user: { type: 'string', maxLength: 256, description: 'The end user, passed to providers that take it.' },
  },
};

export const imagesResponseSchema: JsonSchema = {
  type: 'object', required: ['created', 'data'],
  properties: {
    created: { type: 'integer', description: 'Seconds since the epoch.' },
    data: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          url: { type: 'string', description: 'With response_format url: the provider\'s image URL, or a data: URL when the provider sent the bytes.' },
          b64_json: { type: 'string', description: 'With response_format b64_json: the image, base64.' },
          revised_prompt: { type: 'string', description: 'The prompt as the provider rewrote it, when it did.' },
        },
      },
    },
  },
};
