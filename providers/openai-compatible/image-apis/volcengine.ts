/**
 * Volcengine Ark (Seedream): POST {base}/images/generations {model, prompt, size, response_format, watermark},
 * answered OpenAI's way `{model, created, data: [{url | b64_json}], usage: {generated_images}}`. One image per
 * call (a group of images is another mode whose count is only a maximum). Ark watermarks images unless told
 * not to; the provider option `imageWatermark` decides, off by default as OpenAI's images carry none.
 */
import type { ImageAnswer } from '../../../core/canonical/image.ts';
import { GatewayError } from '../../../core/errors.ts';
import { itemsOf, jsonPost, providerImage, refuseUnmapped, type CompatibleImage } from './shared.ts';

export const volcengineImages: CompatibleImage = {
  maxImages: 1,
  translator: (headers) => ({
    toUpstream(request, target) {
      refuseUnmapped(request, target);
      const watermark = target.options.imageWatermark === true;
      const body = { model: target.upstreamModel, prompt: request.prompt, ...(request.size ? { size: request.size } : {}), response_format: request.response_format, watermark };
      return jsonPost(headers, target, '/images/generations', body);
    },
    fromUpstream(body, target): ImageAnswer {
      const images = itemsOf(body, 'data', target).map((item) => {
        // An image that failed comes back as {error: {code, message}} in its place.
        const error = item.error as { code?: unknown; message?: unknown } | undefined;
        if (error && typeof error === 'object') {
          throw new GatewayError('UPSTREAM_ERROR', `${target.slug} could not make the image: ${String(error.message ?? error.code ?? 'unknown error')}`, { provider: target.slug, error });
        }
        return providerImage(item, target, { url: 'url', b64: 'b64_json' });
      });
      return { images };
    },
  }),
};
