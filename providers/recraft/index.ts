/** Recraft: image generation only, on an OpenAI-shaped API with a Bearer key. */
import { defineProvider } from '../../core/dispatch/provider.ts';
import { openaiErrorFromBody } from '../openai/errors.ts';
import { RECRAFT_MAX_IMAGES, recraftImages } from './images.ts';

export default defineProvider({
  slug: 'recraft',
  family: 'openai-compatible',
  displayName: 'Recraft',
  defaultBaseUrl: 'https://external.api.recraft.ai/v1',
  configSchema: {
    type: 'object', additionalProperties: false, properties: {},
    description: 'Recraft (images only: POST /images/generations). Models recraftv3, recraftv3_vector, ...; style is a Recraft style (realistic_image, digital_illustration, vector_illustration, icon); n 1 to 6; no quality.',
  },
  capabilities: { image: { maxImages: RECRAFT_MAX_IMAGES } },
  image: recraftImages,
  mapError: (status, body, target) => openaiErrorFromBody(target, status, body),
});
