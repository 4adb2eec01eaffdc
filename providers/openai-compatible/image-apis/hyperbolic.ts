/**
 * Hyperbolic's image API: POST {base}/image/generation {model_name, prompt, width, height} answered
 * `{images: [{index, image: <base64 PNG>}]}`. It documents no count field: each call makes one image.
 */
import { dimensions, itemsOf, jsonPost, providerImage, refuseUnmapped, type CompatibleImage } from './shared.ts';

export const hyperbolicImages: CompatibleImage = {
  maxImages: 1,
  translator: (headers) => ({
    toUpstream(request, target) {
      refuseUnmapped(request, target);
      const body = { model_name: target.upstreamModel, prompt: request.prompt, ...(request.size ? dimensions(request.size, target) : {}) };
      return jsonPost(headers, target, '/image/generation', body);
    },
    fromUpstream: (body, target) => ({ images: itemsOf(body, 'images', target).map((item) => providerImage(item, target, { b64: 'image' }, 'image/png')) }),
  }),
};
