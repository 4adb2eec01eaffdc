/**
 * Image generation on the Gemini API and Vertex AI, which share the bodies and differ in the model's URL and the
 * credential (`GeminiEndpoint`). The upstream model's name picks the API:
 * - `imagen-*`: Imagen through `:predict`, {instances: [{prompt}], parameters: {sampleCount, aspectRatio,
 *   personGeneration}} -> {predictions: [{bytesBase64Encoded, mimeType}]}; up to 4 images a call.
 * - `gemini-*image*` (gemini-2.5-flash-image, ...): `:generateContent` with responseModalities IMAGE; the images
 *   are the answer's inlineData parts. candidateCount is not offered with image output, so one call makes one
 *   image (maxImages 1: the gateway makes a call per image); billed by tokens, so usage is kept.
 * Any other model is refused before any I/O. quality and style have no Google counterpart and are left out.
 */
import type { ImageAnswer, ImageRequest, ProviderImage } from '../../core/canonical/image.ts';
import type { ImageTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { upstreamStatusError } from '../../core/dispatch/upstream-errors.ts';
import type { JsonSchema } from '../../core/json-schema.ts';
import { malformedAnswer } from '../shared/embeddings.ts';
import { ratioOf, refusal } from '../shared/inline-media.ts';
import type { GeminiEndpoint } from './chat.ts';

/** Imagen's sampleCount is 1 to 4. */
export const IMAGEN_MAX_IMAGES = 4;
const IMAGEN_RATIOS = ['1:1', '3:4', '4:3', '9:16', '16:9'] as const;
const GEMINI_IMAGE_RATIOS = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'] as const;

export const personGenerationOption: JsonSchema = {
  type: 'string', enum: ['dont_allow', 'allow_adult', 'allow_all'],
  description: 'Imagen and Veo: personGeneration sent with every image and video request (whether people may be generated); the model\'s default when unset.',
};

export type GoogleImageApi = 'imagen' | 'gemini';

/** The model's last path segment, without a Vertex @version. */
const bareName = (upstreamModel: string) => upstreamModel.split('/').at(-1)!.split('@')[0]!;

export function googleImageApi(upstreamModel: string): GoogleImageApi | null {
  const name = bareName(upstreamModel);
  if (/^imagen-/.test(name)) return 'imagen';
  if (/^gemini-.*image/.test(name)) return 'gemini';
  return null;
}

function apiOf(target: ProviderTarget): GoogleImageApi {
  const api = googleImageApi(target.upstreamModel);
  if (!api) throw refusal(target, `image generation with ${target.upstreamModel} (Imagen models imagen-* and Gemini image models gemini-*image* do)`, 'image');
  return api;
}

export const personGeneration = (target: ProviderTarget) => (target.options as { personGeneration?: string }).personGeneration;

function imagenBody(request: ImageRequest, target: ProviderTarget): unknown {
  const person = personGeneration(target);
  return {
    instances: [{ prompt: request.prompt }],
    parameters: {
      sampleCount: request.n,
      ...(request.size ? { aspectRatio: ratioOf(target, request.size, IMAGEN_RATIOS) } : {}),
      ...(person ? { personGeneration: person } : {}),
    },
  };
}

function geminiImageBody(request: ImageRequest, target: ProviderTarget): unknown {
  return {
    contents: [{ role: 'user', parts: [{ text: request.prompt }] }],
    generationConfig: {
      // The first image models answer only when text is allowed beside the image.
      responseModalities: ['TEXT', 'IMAGE'],
      ...(request.size ? { imageConfig: { aspectRatio: ratioOf(target, request.size, GEMINI_IMAGE_RATIOS) } } : {}),
    },
  };
}

/** A safety refusal: the provider's answer carries no image and says why. */
const blocked = (target: ProviderTarget, reason: string, body: unknown) =>
  upstreamStatusError(target.slug, 400, `no image was generated: ${reason}`, body);

interface Prediction { bytesBase64Encoded?: unknown; mimeType?: unknown; raiFilteredReason?: unknown }

function imagenAnswer(body: unknown, target: ProviderTarget): ImageAnswer {
  const predictions = (body as { predictions?: unknown } | null)?.predictions;
  // Every image filtered leaves predictions out entirely.
  if (predictions !== undefined && !Array.isArray(predictions)) throw malformedAnswer(target, 'Imagen answer (predictions is not a list)');
  const list = (predictions ?? []) as Array<Prediction | null>;
  const images: ProviderImage[] = list.filter((p) => typeof p?.bytesBase64Encoded === 'string' && p.bytesBase64Encoded !== '')
    .map((p) => ({ b64_json: p!.bytesBase64Encoded as string, ...(typeof p!.mimeType === 'string' ? { mimeType: p!.mimeType } : {}) }));
  if (images.length === 0) {
    const reason = list.map((p) => p?.raiFilteredReason).find((r): r is string => typeof r === 'string');
    throw blocked(target, reason ?? 'every image was filtered by the provider\'s safety filters', body);
  }
  return { images };
}

interface Part { inlineData?: { mimeType?: unknown; data?: unknown } }
interface GenerateAnswer {
  candidates?: Array<{ content?: { parts?: Part[] }; finishReason?: unknown }>;
  promptFeedback?: { blockReason?: unknown };
  usageMetadata?: { promptTokenCount?: unknown; candidatesTokenCount?: unknown; totalTokenCount?: unknown };
}

const count = (value: unknown) => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined);

function geminiImageAnswer(body: unknown, target: ProviderTarget): ImageAnswer {
  const answer = body as GenerateAnswer | null;
  if (!answer || typeof answer !== 'object') throw malformedAnswer(target, 'generateContent answer');
  const candidate = Array.isArray(answer.candidates) ? answer.candidates[0] : undefined;
  const parts = Array.isArray(candidate?.content?.parts) ? candidate.content.parts : [];
  const images: ProviderImage[] = parts.flatMap((part) => {
    const data = part?.inlineData?.data;
    const mimeType = part?.inlineData?.mimeType;
    return typeof data === 'string' && data !== '' && (typeof mimeType !== 'string' || mimeType.startsWith('image/'))
      ? [{ b64_json: data, ...(typeof mimeType === 'string' ? { mimeType } : {}) }] : [];
  });
  if (images.length === 0) {
    const reason = answer.promptFeedback?.blockReason ?? candidate?.finishReason;
    throw blocked(target, typeof reason === 'string' ? `the model answered without an image (${reason})` : 'the model answered without an image', body);
  }
  const usage = answer.usageMetadata;
  const prompt = count(usage?.promptTokenCount);
  const completion = count(usage?.candidatesTokenCount);
  return {
    images,
    ...(prompt !== undefined && completion !== undefined ? { usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: count(usage?.totalTokenCount) ?? prompt + completion } } : {}),
  };
}

export function googleImageTranslator(endpoint: GeminiEndpoint): ImageTranslator {
  return {
    toUpstream(request, target) {
      const api = apiOf(target);
      const body = api === 'imagen' ? imagenBody(request, target) : geminiImageBody(request, target);
      const method = api === 'imagen' ? ':predict' : ':generateContent';
      return { method: 'POST', path: `${endpoint.modelPath(target)}${method}`, headers: endpoint.headers(target), body: JSON.stringify(body) };
    },
    fromUpstream: (body, target) => (apiOf(target) === 'imagen' ? imagenAnswer(body, target) : geminiImageAnswer(body, target)),
    maxImages: (target) => (googleImageApi(target.upstreamModel) === 'gemini' ? 1 : undefined),
  };
}
