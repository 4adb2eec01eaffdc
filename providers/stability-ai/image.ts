/**
 * Stability AI image generation (v2beta Stable Image): one multipart/form-data POST per image, answered at once
 * with `accept: application/json` as `{image: base64, finish_reason, seed}`.
 *
 * The endpoint comes from the upstream model:
 * - `core` or `stable-image-core` -> /stable-image/generate/core;
 * - `ultra` or `stable-image-ultra` -> /stable-image/generate/ultra;
 * - `sd3...` (sd3.5-large, sd3.5-large-turbo, sd3.5-medium, sd3.5-flash, sd3-large, ...) ->
 *   /stable-image/generate/sd3 with the upstream model as the form's `model`;
 * anything else is refused before any I/O (a configuration mistake, not something to guess at).
 *
 * `size` becomes `aspect_ratio`: Stability takes ratios, not pixels, so a size whose ratio is not one of the nine
 * it makes (within 1%, for sizes rounded to multiples of 8 or 64) is refused (400 CAPABILITY_NOT_SUPPORTED) rather
 * than silently reshaped.
 * `style` is a Stability style preset. The canonical request has no negative prompt or seed: the provider
 * block's options give them.
 */
import type { ImageRequest } from '../../core/canonical/image.ts';
import { formBody } from '../../core/dispatch/multipart.ts';
import type { ImageTranslator, ProviderTarget, UpstreamRequest } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { refuseImageFields } from '../openai/images.ts';
import { isRecord } from '../shared/transcripts.ts';

export const ASPECT_RATIOS = ['16:9', '1:1', '21:9', '2:3', '3:2', '4:5', '5:4', '9:16', '9:21'] as const;
export const STYLE_PRESETS = [
  '3d-model', 'analog-film', 'anime', 'cinematic', 'comic-book', 'digital-art', 'enhance', 'fantasy-art', 'isometric',
  'line-art', 'low-poly', 'modeling-compound', 'neon-punk', 'origami', 'photographic', 'pixel-art', 'tile-texture',
] as const;
export const OUTPUT_FORMATS = ['png', 'jpeg', 'webp'] as const;
type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface StabilityOptions {
  outputFormat?: OutputFormat;
  negativePrompt?: string;
  seed?: number;
}

const invalid = (path: string, message: string) => new GatewayError('VALIDATION_ERROR', message, [{ path, message }]);
/** A value Stability cannot take: refused, never reshaped (the model's next target, if any, is tried). */
const refused = (target: ProviderTarget, parameter: string, message: string) =>
  new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${target.slug}: ${message}`, { provider: target.slug, parameters: [parameter] });

/** The v2beta endpoint of an upstream model, and the `model` form field the sd3 endpoint needs. */
export function endpointOf(target: ProviderTarget): { path: string; model?: string } {
  const model = target.upstreamModel;
  if (model === 'core' || model === 'stable-image-core') return { path: '/stable-image/generate/core' };
  if (model === 'ultra' || model === 'stable-image-ultra') return { path: '/stable-image/generate/ultra' };
  if (/^sd3(\.\d+)?(-[a-z0-9-]+)?$/.test(model)) return { path: '/stable-image/generate/sd3', model };
  throw new GatewayError('UPSTREAM_BAD_REQUEST', `${target.slug}: upstream model "${model}" is not core, ultra or an sd3 model (sd3.5-large, sd3.5-medium, ...)`, { provider: target.slug });
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** WIDTHxHEIGHT -> the Stability aspect ratio it is, or a refusal naming the ratios there are. */
export function aspectRatioOf(size: string, target: ProviderTarget): string {
  const match = /^(\d+)x(\d+)$/.exec(size);
  const width = Number(match?.[1]);
  const height = Number(match?.[2]);
  if (!match || width === 0 || height === 0) throw invalid('/size', `size must be WIDTHxHEIGHT, got "${size}"`);
  const wanted = width / height;
  const ratio = ASPECT_RATIOS.find((r) => {
    const [w, h] = r.split(':').map(Number) as [number, number];
    return Math.abs(w / h - wanted) / wanted <= 0.01;
  });
  if (!ratio) {
    const d = gcd(width, height);
    throw refused(target, 'size', `size ${size} (${width / d}:${height / d}) has no Stability aspect ratio; sizes of ratio ${ASPECT_RATIOS.join(', ')} are made`);
  }
  return ratio;
}

function styleOf(style: string, target: ProviderTarget): string {
  if (!(STYLE_PRESETS as readonly string[]).includes(style)) throw refused(target, 'style', `style "${style}" is not a Stability style preset (${STYLE_PRESETS.join(', ')})`);
  return style;
}

export function stabilityHeaders(target: ProviderTarget): Record<string, string> {
  return { ...target.headers, ...(target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}) };
}

export const stabilityImage: ImageTranslator = {
  toUpstream(request: ImageRequest, target: ProviderTarget): UpstreamRequest {
    // Stability has no quality setting: one asked for is refused, not dropped.
    refuseImageFields(request, target, ['quality']);
    const { path, model } = endpointOf(target);
    const options = target.options as StabilityOptions;
    const format = options.outputFormat ?? 'png';
    if (model && format === 'webp') throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${target.slug} does not make webp images with ${model} (png or jpeg)`, { provider: target.slug, capability: 'image' });
    const fields: Array<[string, string]> = [['prompt', request.prompt]];
    if (options.negativePrompt) fields.push(['negative_prompt', options.negativePrompt]);
    if (request.size !== undefined) fields.push(['aspect_ratio', aspectRatioOf(request.size, target)]);
    if (options.seed !== undefined) fields.push(['seed', String(options.seed)]);
    fields.push(['output_format', format]);
    if (request.style !== undefined) fields.push(['style_preset', styleOf(request.style, target)]);
    if (model) fields.push(['model', model]);
    const form = formBody(fields);
    const headers = { ...stabilityHeaders(target), accept: 'application/json', 'content-type': form.contentType };
    return { method: 'POST', path, headers, body: form.body };
  },
  fromUpstream(body, target) {
    if (!isRecord(body)) throw new GatewayError('UPSTREAM_ERROR', `${target.slug} returned an answer that is not a JSON object`, { provider: target.slug });
    if (body.finish_reason === 'CONTENT_FILTERED') {
      // Stability answers 200 with a blurred image: the caller asked for an image, and this is not it.
      throw new GatewayError('UPSTREAM_BAD_REQUEST', `${target.slug}: the image was withheld by Stability's content filter (finish_reason CONTENT_FILTERED); change the prompt`, {
        provider: target.slug, upstreamStatus: 200, upstreamError: { finish_reason: body.finish_reason, seed: body.seed ?? null },
      });
    }
    if (typeof body.image !== 'string' || body.image === '') throw new GatewayError('UPSTREAM_ERROR', `${target.slug} returned no image (finish_reason ${JSON.stringify(body.finish_reason ?? null)})`, { provider: target.slug });
    const format = (target.options as StabilityOptions).outputFormat ?? 'png';
    return { images: [{ b64_json: body.image, mimeType: `image/${format}` }] };
  },
};
