/**
 * Nebius AI Studio: POST {base}/images/generations, OpenAI's path with its own fields: {model, prompt, width,
 * height, response_format, response_extension}, answered `{id, data: [{url | b64_json}]}`. PNG is asked for, so
 * bytes are known to be PNG; it documents no count field, so each call makes one image.
 */
import { dimensions, itemsOf, jsonPost, providerImage, refuseUnmapped, type CompatibleImage } from './shared.ts';

export const nebiusImages: CompatibleImage = {
  maxImages: 1,
  translator: (headers) => ({
    toUpstream(request, target) {
      refuseUnmapped(request, target);
      const body = {
        model: target.upstreamModel, prompt: request.prompt, ...(request.size ? dimensions(request.size, target) : {}),
        response_format: request.response_format, response_extension: 'png',
      };
      return jsonPost(headers, target, '/images/generations', body);
    },
    fromUpstream: (body, target) => ({ images: itemsOf(body, 'data', target).map((item) => providerImage(item, target, { url: 'url', b64: 'b64_json' }, 'image/png')) }),
  }),
};
