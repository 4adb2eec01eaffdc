/**
 * Image generation on Bedrock through InvokeModel, whose body is the model's own:
 * - Amazon Nova Canvas and Titan Image Generator share {taskType: TEXT_IMAGE, textToImageParams: {text, style?},
 *   imageGenerationConfig: {numberOfImages, width, height, quality}} -> {images: [base64 PNG], error?}; up to 5
 *   images a call.
 * - Stability's Stable Diffusion 3.x and Stable Image models take {prompt, aspect_ratio, output_format} ->
 *   {images, finish_reasons, seeds}: one image a call (maxImages 1: the gateway makes a call per image).
 * Every other model (the older SDXL body included) is refused before any I/O.
 */
import type { ImageRequest } from '../../core/canonical/image.ts';
import type { ImageTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { upstreamStatusError } from '../../core/dispatch/upstream-errors.ts';
import { parseSize, ratioOf, refusal } from '../shared/inline-media.ts';
import { invokeModel } from './embeddings.ts';
import { malformed } from './errors.ts';

export const AMAZON_MAX_IMAGES = 5;

/** Nova Canvas's visual styles; Titan has none. */
const NOVA_STYLES = ['3D_ANIMATED_FAMILY_FILM', 'DESIGN_SKETCH', 'FLAT_VECTOR_ILLUSTRATION', 'GRAPHIC_NOVEL_ILLUSTRATION', 'MAXIMALISM', 'MIDCENTURY_RETRO', 'PHOTOREALISM', 'SOFT_DIGITAL_PAINTING'] as const;
/** OpenAI's styles, which clients send by default: no Amazon counterpart, so left out rather than refused. */
const OPENAI_STYLES = ['vivid', 'natural'];
/** The caller's quality as Amazon's two: standard, or premium for OpenAI's hd and high. */
const QUALITY: Record<string, 'standard' | 'premium'> = { standard: 'standard', low: 'standard', medium: 'standard', auto: 'standard', hd: 'premium', high: 'premium', premium: 'premium' };

const STABILITY_RATIOS = ['1:1', '2:3', '3:2', '4:5', '5:4', '9:16', '16:9', '9:21', '21:9'] as const;

type BedrockImageModel = 'nova-canvas' | 'titan-image' | 'stability';

/** Model ids, inference profiles (us.amazon.nova-canvas-v1:0) and ARNs ending in one. */
export function bedrockImageModel(upstreamModel: string): BedrockImageModel | null {
  const id = upstreamModel.split('/').at(-1)!;
  if (/(?:^|\.)amazon\.nova-canvas/.test(id)) return 'nova-canvas';
  if (/(?:^|\.)amazon\.titan-image-generator/.test(id)) return 'titan-image';
  if (/(?:^|\.)stability\.(?:sd3-|stable-image-)/.test(id)) return 'stability';
  return null;
}

function modelFor(target: ProviderTarget): BedrockImageModel {
  const model = bedrockImageModel(target.upstreamModel);
  if (model) return model;
  throw refusal(target, `image generation with ${target.upstreamModel} (Amazon Nova Canvas, Titan Image Generator, and Stability's Stable Diffusion 3.x and Stable Image models do)`, 'image');
}

/** quality and style mean nothing to Stability's models: OpenAI's defaults pass unused, anything else is refused. */
function stabilityBody(request: ImageRequest, target: ProviderTarget): unknown {
  if (request.quality !== undefined && !['standard', 'auto'].includes(request.quality)) throw refusal(target, `the quality ${request.quality} with ${target.upstreamModel}`, 'quality');
  if (request.style !== undefined && !OPENAI_STYLES.includes(request.style)) throw refusal(target, `the style ${request.style} with ${target.upstreamModel}`, 'style');
  return { prompt: request.prompt, ...(request.size ? { aspect_ratio: ratioOf(target, request.size, STABILITY_RATIOS) } : {}), output_format: 'png' };
}

function style(request: ImageRequest, target: ProviderTarget, model: BedrockImageModel): string | undefined {
  if (request.style === undefined || OPENAI_STYLES.includes(request.style)) return undefined;
  const upper = request.style.toUpperCase();
  if (model === 'nova-canvas' && (NOVA_STYLES as readonly string[]).includes(upper)) return upper;
  throw refusal(target, `the style ${request.style} with ${target.upstreamModel}${model === 'nova-canvas' ? ` (styles: ${NOVA_STYLES.join(', ')})` : ' (it takes no style)'}`, 'style');
}

export function bedrockImageBody(request: ImageRequest, target: ProviderTarget): unknown {
  const model = modelFor(target);
  if (model === 'stability') return stabilityBody(request, target);
  const size = request.size ? parseSize(request.size) : null;
  if (request.size && !size) throw refusal(target, `the size ${request.size}`, 'size');
  const quality = request.quality === undefined ? undefined : QUALITY[request.quality];
  if (request.quality !== undefined && !quality) throw refusal(target, `the quality ${request.quality} (standard, or premium for hd and high)`, 'quality');
  const chosenStyle = style(request, target, model);
  return {
    taskType: 'TEXT_IMAGE',
    textToImageParams: { text: request.prompt, ...(chosenStyle ? { style: chosenStyle } : {}) },
    imageGenerationConfig: {
      numberOfImages: request.n,
      // Amazon checks the sizes each model takes (multiples of 16 for Nova Canvas, a fixed list for Titan).
      ...(size ? { width: size.width, height: size.height } : {}),
      ...(quality ? { quality } : {}),
    },
  };
}

export const bedrockImages: ImageTranslator = {
  toUpstream: (request, target) => invokeModel(target, bedrockImageBody(request, target)),
  maxImages: (target) => (bedrockImageModel(target.upstreamModel) === 'stability' ? 1 : undefined),
  fromUpstream(body, target) {
    const answer = body as { images?: unknown; error?: unknown; finish_reasons?: unknown } | null;
    if (!answer || typeof answer !== 'object') throw malformed(target, 'image answer');
    const images = Array.isArray(answer.images) ? answer.images.filter((i): i is string => typeof i === 'string' && i !== '') : [];
    if (images.length === 0) {
      // Amazon's models say why in `error`, Stability's in finish_reasons ("Filter reason: prompt").
      const reason = typeof answer.error === 'string' && answer.error !== '' ? answer.error
        : Array.isArray(answer.finish_reasons) ? answer.finish_reasons.find((r): r is string => typeof r === 'string') : undefined;
      throw upstreamStatusError(target.slug, 400, `no image was generated: ${reason ?? 'the answer holds none'}`, answer);
    }
    return { images: images.map((b64) => ({ b64_json: b64, mimeType: 'image/png' })) };
  },
};
