/**
 * Image generation in OpenAI's wire format (POST /images/generations {model, prompt, n, size, quality, style,
 * response_format, user} -> {created, data: [{url | b64_json, revised_prompt}], usage}). `createOpenAiImages` is
 * the family's one translator: Azure, the OpenAI-compatible hosts and Recraft pass hooks for their path, headers
 * and body. The answer is taken as the provider gave it (URLs or bytes); the core renders the caller's format.
 */
import type { ImageAnswer, ImageRequest, ProviderImage } from '../../core/canonical/image.ts';
import type { ImageTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { openaiHeaders } from './chat.ts';

export interface OpenAiImagesHooks {
  /** The request path under the base URL, query included (default `/images/generations`). */
  path?(target: ProviderTarget): string;
  /** The request headers, credential included (default: Bearer and OpenAI's organization/project). */
  headers?(target: ProviderTarget): Record<string, string>;
  /**
   * Whether `response_format` is sent (as the caller asked). Default: for every model but OpenAI's GPT image
   * models, which always answer base64 and reject the field.
   */
  responseFormat?(target: ProviderTarget): boolean;
  /** Reshapes the JSON body once OpenAI's fields are set (a host's own names), or throws to refuse the request. */
  body?(body: Record<string, unknown>, request: ImageRequest, target: ProviderTarget): void;
  /** Images one call of this target's model makes, when fewer than the provider's cap (default: dall-e-3 makes one). */
  maxImages?(target: ProviderTarget): number | undefined;
}

/** The canonical request fields a host may not take; what changes the image is refused, never dropped. */
export type ImageField = 'size' | 'quality' | 'style';

/** Refuses (400 CAPABILITY_NOT_SUPPORTED) a request naming a field the provider or model does not take. */
export function refuseImageFields(request: ImageRequest, target: ProviderTarget, fields: readonly ImageField[], why = `Provider ${target.slug}`): void {
  const asked = fields.filter((name) => request[name] !== undefined);
  if (asked.length === 0) return;
  throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `${why} does not support the image parameter${asked.length > 1 ? 's' : ''} ${asked.join(', ')}`,
    { provider: target.slug, parameters: asked });
}

const isGptImage = (model: string): boolean => /(^|\/)gpt-image/i.test(model);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
const count = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined);

/** The first bytes of the common image formats, as base64: hosts rarely say which format their bytes are. */
const SIGNATURES: Array<[string, string]> = [
  ['/9j/', 'image/jpeg'], ['iVBORw0KGgo', 'image/png'], ['UklGR', 'image/webp'], ['R0lGOD', 'image/gif'], ['PHN2Zy', 'image/svg+xml'], ['PD94bWw', 'image/svg+xml'],
];
const OUTPUT_FORMATS: Record<string, string> = { png: 'image/png', jpeg: 'image/jpeg', jpg: 'image/jpeg', webp: 'image/webp' };

/** Base64 bytes as a host sent them: plain, or (xAI) a whole data URL. */
function bytesOf(value: string, declared: string | undefined): { b64_json: string; mimeType?: string } {
  const data = /^data:([^;,]+)?(?:;[^,]*)?;base64,/i.exec(value);
  const b64 = data ? value.slice(data[0].length) : value;
  const mimeType = data?.[1] ?? declared ?? SIGNATURES.find(([prefix]) => b64.startsWith(prefix))?.[1];
  return { b64_json: b64, ...(mimeType ? { mimeType } : {}) };
}

/** OpenAI's answer (and the family's): data[{url | b64_json, revised_prompt, mime_type}], usage in tokens (GPT image models). */
export function fromOpenAiImages(body: unknown): ImageAnswer {
  if (!isObject(body) || !Array.isArray(body.data)) return { images: [] };
  const format = text(body.output_format);
  const declared = format ? OUTPUT_FORMATS[format.toLowerCase()] : undefined;
  const images: ProviderImage[] = [];
  for (const item of body.data) {
    if (!isObject(item)) continue;
    const url = text(item.url);
    const b64 = text(item.b64_json);
    const revised = text(item.revised_prompt);
    const image: ProviderImage = b64 ? bytesOf(b64, text(item.mime_type) ?? declared) : url ? { url } : {};
    if (revised) image.revised_prompt = revised;
    images.push(image);
  }
  const usage = isObject(body.usage) ? body.usage : undefined;
  const input = count(usage?.input_tokens);
  const output = count(usage?.output_tokens);
  if (input === undefined && output === undefined) return { images };
  return { images, usage: { prompt_tokens: input ?? 0, completion_tokens: output ?? 0, total_tokens: count(usage?.total_tokens) ?? (input ?? 0) + (output ?? 0) } };
}

export function createOpenAiImages(hooks: OpenAiImagesHooks = {}): ImageTranslator {
  return {
    toUpstream(request, target) {
      const body: Record<string, unknown> = { model: target.upstreamModel, prompt: request.prompt, n: request.n };
      for (const name of ['size', 'quality', 'style', 'user'] as const) if (request[name] !== undefined) body[name] = request[name];
      if (hooks.responseFormat?.(target) ?? !isGptImage(target.upstreamModel)) body.response_format = request.response_format;
      hooks.body?.(body, request, target);
      const headers = { ...(hooks.headers?.(target) ?? openaiHeaders(target)), 'content-type': 'application/json' };
      return { method: 'POST', path: hooks.path?.(target) ?? '/images/generations', headers, body: JSON.stringify(body) };
    },
    fromUpstream: (body) => fromOpenAiImages(body),
    maxImages: hooks.maxImages ?? ((target) => (/(^|\/)dall-e-3/i.test(target.upstreamModel) ? 1 : undefined)),
  };
}

export const openaiImages = createOpenAiImages();
