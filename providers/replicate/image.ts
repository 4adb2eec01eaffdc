/**
 * Image generation on Replicate (FLUX models: {prompt, num_outputs, aspect_ratio, output_format}): a prediction
 * whose output is a list of image URLs (one URL for models that make one image). It is created without holding
 * the request and polled, so each poll's logs give the progress the /image-progress socket reports. The size
 * asked becomes the nearest aspect ratio the model takes (within 5%); a size that is near none is refused, as
 * are a quality and a style (FLUX has neither).
 */
import type { ImageRequest } from '../../core/canonical/image.ts';
import type { ImageTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { logProgress, mediaPrediction, outputUrls, succeeded } from './media.ts';
import { imageProfile, nearestRatio, refused } from './models.ts';
import { nextStep } from './predictions.ts';

/** The most images one prediction of any listed model makes (maxImages(target) says each model's). */
export const MAX_IMAGES = 4;

export function imageInput(request: ImageRequest, target: ProviderTarget): Record<string, unknown> {
  const profile = imageProfile(target);
  if (request.n > profile.maxOutputs) throw refused(target, `${request.n} images in one call (it makes ${profile.maxOutputs})`, 'n');
  // FLUX has neither a quality nor a style setting: refused rather than dropped.
  if (request.quality !== undefined) throw refused(target, `quality ${request.quality}`, 'quality');
  if (request.style !== undefined) throw refused(target, `style ${request.style}`, 'style');
  // PNG, the format OpenAI's images come in; flux's default would be webp.
  const input: Record<string, unknown> = { prompt: request.prompt, output_format: 'png' };
  if (profile.maxOutputs > 1) input.num_outputs = request.n;
  if (request.size !== undefined) {
    const ratio = nearestRatio(request.size, profile.aspectRatios);
    if (!ratio) throw refused(target, `size ${request.size} (its aspect ratios are ${profile.aspectRatios.join(', ')})`, 'size');
    input.aspect_ratio = ratio;
  }
  return input;
}

export const replicateImage: ImageTranslator = {
  toUpstream: (request, target) => mediaPrediction(target, imageInput(request, target), false),
  followUp: (body, target, step) => nextStep(body, target, false, step),
  progress: logProgress,
  // FLUX Pro models make one image a prediction: the core makes one call per image for them.
  maxImages: (target) => imageProfile(target).maxOutputs,
  fromUpstream(body, target) {
    const urls = outputUrls(succeeded(body, target), target);
    return { images: urls.map((url) => ({ url })) };
  },
};
