/**
 * Image generation on the OpenAI-compatible hosts that serve it: OpenAI's POST /images/generations
 * (providers/openai/images.ts) with each host's documented differences as data: how many images a call makes,
 * which response_format it takes, the OpenAI fields it does not take (refused before any I/O: a size, quality or
 * style it would ignore changes the image the caller gets), and hooks for hosts naming fields their own way.
 */
import type { ImageRequest } from '../../core/canonical/image.ts';
import type { ImageTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import type { CompatibleImage } from './image-apis/index.ts';
import { createOpenAiImages, refuseImageFields, type ImageField, type OpenAiImagesHooks } from '../openai/images.ts';

export type ImageBodyHook = NonNullable<OpenAiImagesHooks['body']>;

export interface CompatibleImages {
  /** Images one call makes, when the host documents a cap below 10 on `n`. */
  maxImages?: number;
  /**
   * `asked` (the default): response_format is sent as the caller asked; `b64_json`: the host answers base64 only
   * and is asked for it; `none`: the host documents no response_format (it answers base64).
   */
  responseFormat?: 'asked' | 'b64_json' | 'none';
  /** Fields the host does not take: a request naming one is refused (400) before any I/O. */
  refuse?: readonly ImageField[];
  /** False for hosts that do not document `user` (an abuse-monitoring id, not part of the image: left out). */
  user?: boolean;
  /** Reshapes the body after the above (fields the host names otherwise), or refuses per model. */
  body?: ImageBodyHook;
}

/** The catalogue's image entry for a host of OpenAI's image API. */
export function openAiShapedImage(spec: CompatibleImages): CompatibleImage {
  return { ...(spec.maxImages ? { maxImages: spec.maxImages } : {}), translator: (headers) => compatibleImages(spec, headers) };
}

/** `headers` are the entry's, as its chat sends them (providers/openai-compatible/index.ts). */
export function compatibleImages(spec: CompatibleImages, headers: (target: ProviderTarget) => Record<string, string>): ImageTranslator {
  const format = spec.responseFormat ?? 'asked';
  return createOpenAiImages({
    headers,
    responseFormat: () => format !== 'none',
    maxImages: () => undefined,
    body(body, request, target) {
      refuseImageFields(request, target, spec.refuse ?? []);
      if (format === 'b64_json') body.response_format = 'b64_json';
      if (spec.user === false) delete body.user;
      spec.body?.(body, request, target);
    },
  });
}

function dimensions(request: ImageRequest): { width: number; height: number } | undefined {
  if (request.size === undefined) return undefined;
  const match = /^(\d{1,5})x(\d{1,5})$/.exec(request.size);
  if (!match) throw new GatewayError('VALIDATION_ERROR', `size must be WIDTHxHEIGHT, not ${JSON.stringify(request.size)}`, [{ path: '/size', message: 'WIDTHxHEIGHT' }]);
  return { width: Number(match[1]), height: Number(match[2]) };
}

/** Together takes the size as width and height in pixels, and calls base64 bytes `base64`. */
export const togetherImageBody: ImageBodyHook = (body, request) => {
  const size = dimensions(request);
  delete body.size;
  if (size) Object.assign(body, size);
  body.response_format = request.response_format === 'b64_json' ? 'base64' : 'url';
};

/**
 * xAI documents size and style as not supported, and quality only for its grok-imagine models (grok-2-image
 * takes none of the three).
 */
export const xaiImageBody: ImageBodyHook = (_body, request, target) => {
  if (!/grok-imagine/i.test(target.upstreamModel)) refuseImageFields(request, target, ['quality'], `${target.upstreamModel} on ${target.slug}`);
};
