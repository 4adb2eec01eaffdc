/**
 * SiliconFlow: POST {base}/images/generations {model, prompt, image_size, batch_size}, answered
 * `{images: [{url}], timings, seed}` (URLs valid for an hour). batch_size (1 to 4) is documented for Kolors only:
 * several images from another model are refused rather than answered with one.
 */
import { imageRefused, itemsOf, jsonPost, providerImage, refuseUnmapped, type CompatibleImage } from './shared.ts';

const BATCH_MODELS = /kolors/i;

export const siliconflowImages: CompatibleImage = {
  maxImages: 4,
  translator: (headers) => ({
    toUpstream(request, target) {
      refuseUnmapped(request, target);
      if (request.n > 1 && !BATCH_MODELS.test(target.upstreamModel)) {
        throw imageRefused(target, `n > 1 with ${target.upstreamModel} (batch_size is Kolors' only)`, ['n']);
      }
      const body = {
        model: target.upstreamModel, prompt: request.prompt,
        ...(request.size ? { image_size: request.size } : {}), ...(request.n > 1 ? { batch_size: request.n } : {}),
      };
      return jsonPost(headers, target, '/images/generations', body);
    },
    fromUpstream: (body, target) => ({ images: itemsOf(body, 'images', target).map((item) => providerImage(item, target, { url: 'url' })) }),
  }),
};
