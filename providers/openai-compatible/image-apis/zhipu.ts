/**
 * Zhipu's CogView: POST {base}/images/generations {model, prompt, size, quality (standard | hd), user_id},
 * answered `{created, data: [{url}]}`: one image per call, always a URL (the core downloads it for b64_json).
 */
import { itemsOf, jsonPost, providerImage, refuseUnmapped, type CompatibleImage } from './shared.ts';

const QUALITIES = ['standard', 'hd'] as const;

export const zhipuImages: CompatibleImage = {
  maxImages: 1,
  translator: (headers) => ({
    toUpstream(request, target) {
      const quality = refuseUnmapped(request, target, QUALITIES);
      // user_id must be 6 to 128 characters; an id outside that would fail the image it does not change.
      const user = request.user !== undefined && request.user.length >= 6 && request.user.length <= 128 ? { user_id: request.user } : {};
      const body = {
        model: target.upstreamModel, prompt: request.prompt,
        ...(request.size ? { size: request.size } : {}), ...(quality ? { quality } : {}), ...user,
      };
      return jsonPost(headers, target, '/images/generations', body);
    },
    fromUpstream: (body, target) => ({ images: itemsOf(body, 'data', target).map((item) => providerImage(item, target, { url: 'url' })) }),
  }),
};
