/**
 * Fireworks' FLUX text-to-image workflow: POST {base}/workflows/accounts/fireworks/models/<model>/text_to_image,
 * the base being the chat one (…/inference/v1). With `Accept: application/json` it answers `{base64: [PNG…],
 * finishReason: SUCCESS | CONTENT_FILTERED, seed}` instead of the image's bytes. The size is asked for as one of
 * the workflow's aspect ratios; there is no count field, so each call makes one image.
 */
import type { ImageAnswer } from '../../../core/canonical/image.ts';
import type { ProviderTarget } from '../../../core/dispatch/provider.ts';
import { GatewayError } from '../../../core/errors.ts';
import { base64Image, dimensions, imageRefused, jsonPost, malformedImages, refuseUnmapped, type CompatibleImage } from './shared.ts';

const ASPECT_RATIOS = new Set(['1:1', '21:9', '16:9', '3:2', '5:4', '4:5', '2:3', '9:16', '9:21', '4:3', '3:4']);

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** WIDTHxHEIGHT as the workflow's aspect ratio, when it is one of them. */
export function fireworksAspectRatio(size: string, target: ProviderTarget): string {
  const { width, height } = dimensions(size, target);
  const divisor = width > 0 && height > 0 ? gcd(width, height) : 1;
  const ratio = `${width / divisor}:${height / divisor}`;
  if (!ASPECT_RATIOS.has(ratio)) throw imageRefused(target, `the image size ${size} (its aspect ratio must be one of ${[...ASPECT_RATIOS].join(', ')})`, ['size']);
  return ratio;
}

/** A model named without its account is one of Fireworks' own (accounts/fireworks/models/…). */
export function fireworksModelPath(model: string): string {
  return model.startsWith('accounts/') ? model : `accounts/fireworks/models/${model}`;
}

export const fireworksImages: CompatibleImage = {
  maxImages: 1,
  translator: (headers) => ({
    toUpstream(request, target) {
      refuseUnmapped(request, target);
      const body = { prompt: request.prompt, ...(request.size ? { aspect_ratio: fireworksAspectRatio(request.size, target) } : {}) };
      return jsonPost(headers, target, `/workflows/${fireworksModelPath(target.upstreamModel)}/text_to_image`, body, { accept: 'application/json' });
    },
    fromUpstream(body, target): ImageAnswer {
      const answer = (body ?? {}) as { base64?: unknown; finishReason?: unknown };
      if (answer.finishReason === 'CONTENT_FILTERED') {
        throw new GatewayError('UPSTREAM_BAD_REQUEST', `${target.slug} filtered the image (finishReason CONTENT_FILTERED)`, { provider: target.slug, finishReason: 'CONTENT_FILTERED' });
      }
      const list = Array.isArray(answer.base64) ? answer.base64.filter((b): b is string => typeof b === 'string' && b.length > 0) : [];
      if (list.length === 0) throw malformedImages(target, 'base64[]');
      return { images: list.map((b64) => base64Image(b64, 'image/png')) };
    },
  }),
};
