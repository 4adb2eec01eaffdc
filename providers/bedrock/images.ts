/**
 * Image generation on Bedrock through InvokeModel with Amazon's image models, which share one body:
 * {taskType: TEXT_IMAGE, textToImageParams: {text, style?}, imageGenerationConfig: {numberOfImages, width, height,
 * quality}} -> {images: [base64 PNG], error?}. Amazon Nova Canvas and Titan Image Generator make up to 5 images a
 * call. Stability models on Bedrock take a body of their own and are refused, as is every other model.
 */
import type { ImageRequest } from '../../core/canonical/image.ts';
import type { ImageTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { upstreamStatusError } from '../../core/dispatch/upstream-errors.ts';
import { parseSize, refusal } from '../shared/inline-media.ts';
import { invokeModel } from './embeddings.ts';
import { malformed } from './errors.ts';

export const AMAZON_MAX_IMAGES = 5;

/** Nova Canvas's visual styles; Titan has none. */
const NOVA_STYLES = ['3D_ANIMATED_FAMILY_FILM', 'DESIGN_SKETCH', 'FLAT_VECTOR_ILLUSTRATION', 'GRAPHIC_NOVEL_ILLUSTRATION', 'MAXIMALISM', 'MIDCENTURY_RETRO', 'PHOTOREALISM', 'SOFT_DIGITAL_PAINTING'] as const;
/** OpenAI's styles, which clients send by default: no Amazon counterpart, so left out rather than refused. */
const OPENAI_STYLES = ['vivid', 'natural'];
/** The caller's quality as Amazon's two: standard, or premium for OpenAI's hd and high. */
const QUALITY: Record<string, 'standard' | 'premium'> = { standard: 'standard', low: 'standard', medium: 'standard', auto: 'standard', hd: 'premium', high: 'premium', premium: 'premium' };

type AmazonImageModel = 'nova-canvas' | 'titan-image';

/** Model ids, inference profiles (us.amazon.nova-canvas-v1:0) and ARNs ending in one. */
export function amazonImageModel(upstreamModel: string): AmazonImageModel | null {
  const id = upstreamModel.split('/').at(-1)!;
  if (/(?:^|\.)amazon\.nova-canvas/.test(id)) return 'nova-canvas';
  if (/(?:^|\.)amazon\.titan-image-generator/.test(id)) return 'titan-image';
  return null;
}

function modelFor(target: ProviderTarget): AmazonImageModel {
  const model = amazonImageModel(target.upstreamModel);
  if (model) return model;
  const stability = /(?:^|\.)stability\./.test(target.upstreamModel.split('/').at(-1)!);
  throw refusal(target, `image generation with ${target.upstreamModel}${stability ? ' (Stability models on Bedrock take their own request body; Amazon Nova Canvas and Titan Image Generator are supported)' : ' (Amazon Nova Canvas and Titan Image Generator models do)'}`, 'image');
}

function style(request: ImageRequest, target: ProviderTarget, model: AmazonImageModel): string | undefined {
  if (request.style === undefined || OPENAI_STYLES.includes(request.style)) return undefined;
  const upper = request.style.toUpperCase();
  if (model === 'nova-canvas' && (NOVA_STYLES as readonly string[]).includes(upper)) return upper;
  throw refusal(target, `the style ${request.style} with ${target.upstreamModel}${model === 'nova-canvas' ? ` (styles: ${NOVA_STYLES.join(', ')})` : ' (it takes no style)'}`, 'style');
}

export function amazonImageBody(request: ImageRequest, target: ProviderTarget): unknown {
  const model = modelFor(target);
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
  toUpstream: (request, target) => invokeModel(target, amazonImageBody(request, target)),
  fromUpstream(body, target) {
    const answer = body as { images?: unknown; error?: unknown } | null;
    if (!answer || typeof answer !== 'object') throw malformed(target, 'image answer');
    const images = Array.isArray(answer.images) ? answer.images.filter((i): i is string => typeof i === 'string' && i !== '') : [];
    // An answer without images says why in `error`, when it says anything.
    if (images.length === 0) throw upstreamStatusError(target.slug, 400, `no image was generated: ${typeof answer.error === 'string' && answer.error !== '' ? answer.error : 'the answer holds none'}`, answer);
    return { images: images.map((b64) => ({ b64_json: b64, mimeType: 'image/png' })) };
  },
};
