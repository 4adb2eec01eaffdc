/**
 * Recraft's image generation (POST /images/generations {prompt, model, style, size, n, response_format}): OpenAI's
 * request shape (providers/openai/images.ts) with Recraft's own meanings. `style` is a Recraft style
 * (realistic_image, digital_illustration, vector_illustration, icon, ...), `size` WxH (or w:h) from its list of
 * sizes, `n` 1 to 6. It has no quality (refused) and documents no `user` (left out: not part of the image).
 * Vector models answer SVG.
 */
import type { ImageTranslator } from '../../core/dispatch/provider.ts';
import { createOpenAiImages, refuseImageFields } from '../openai/images.ts';

/** Recraft makes at most six images per request. */
export const RECRAFT_MAX_IMAGES = 6;

export const recraftImages: ImageTranslator = createOpenAiImages({
  responseFormat: () => true,
  maxImages: () => undefined,
  body(body, request, target) {
    refuseImageFields(request, target, ['quality']);
    delete body.user;
  },
});
