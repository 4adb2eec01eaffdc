/**
 * Image generation on fal (fal-ai/flux/dev, flux/schnell, ...): input `{prompt, num_images, image_size:
 * {width, height}, output_format}`, output `{images: [{url, content_type, width, height}], prompt}`. FLUX makes
 * at most 4 images a request: the core splits larger n. The caller's quality and style have no FLUX
 * counterpart and are not sent. PNG is asked by default, the format OpenAI's images come in. Progress comes from
 * the status polls: queued 0, running the percentage the model last logged (else 50).
 */
import type { ImageTranslator } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { isRecord } from '../shared/transcripts.ts';
import { fileUrl, malformed, options, queueAnswer, queueProgress, queueStep, submit } from './queue.ts';

export const FAL_MAX_IMAGES = 4;

export const falImage: ImageTranslator = {
  toUpstream(request, target) {
    const input: Record<string, unknown> = { prompt: request.prompt, num_images: request.n, output_format: options(target).imageFormat ?? 'png' };
    if (request.size !== undefined) {
      const match = /^(\d+)x(\d+)$/.exec(request.size);
      if (!match) throw new GatewayError('VALIDATION_ERROR', `size must be WIDTHxHEIGHT, got ${JSON.stringify(request.size)}`, { param: 'size' });
      input.image_size = { width: Number(match[1]), height: Number(match[2]) };
    }
    return submit(target, input);
  },
  // Models that make fewer than FLUX's 4 a request: the operator's bound.
  maxImages: (target) => options(target).maxImages,
  followUp: (body, target) => queueStep(body, target),
  progress(body) {
    const answer = queueAnswer(body);
    return answer ? queueProgress(answer) : undefined;
  },
  fromUpstream(body, target) {
    if (!isRecord(body) || !Array.isArray(body.images) || body.images.length === 0) throw malformed(target, 'an image output without images');
    return {
      images: body.images.map((image) => {
        const url = fileUrl(image, target, 'image');
        const type = isRecord(image) && typeof image.content_type === 'string' ? image.content_type : undefined;
        return { url, ...(type ? { mimeType: type } : {}) };
      }),
    };
  },
};
