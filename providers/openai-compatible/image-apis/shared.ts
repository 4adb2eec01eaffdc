/**
 * What the image APIs of the OpenAI-compatible hosts share: a JSON POST with the entry's headers, refusals of the
 * canonical fields a host has no equivalent of (400 CAPABILITY_NOT_SUPPORTED before any I/O, rather than an image
 * that silently ignores them), the size as width and height, and the reading of an answer's image list.
 */
import { refused } from '../policy.ts';
import type { ImageRequest, ProviderImage } from '../../../core/canonical/image.ts';
import type { ImageTranslator, ProviderTarget, UpstreamRequest } from '../../../core/dispatch/provider.ts';
import { GatewayError } from '../../../core/errors.ts';

export type ImageHeaders = (target: ProviderTarget) => Record<string, string>;

/** A host's image API: its translator, built on the entry's headers, and the images one call makes. */
export interface CompatibleImage {
  /** capabilities.image.maxImages: a request for more is split into several calls (absent: 10). */
  maxImages?: number;
  translator(headers: ImageHeaders): ImageTranslator;
}

export function imageRefused(target: ProviderTarget, what: string, parameters: string[]): GatewayError {
  return refused(target, what, { parameters });
}

/** Qualities that ask for a model's default: no field to send, nothing to refuse. */
const DEFAULT_QUALITIES = new Set(['auto', 'standard']);

/**
 * Refuses quality and style where the host has no such field, or a quality outside the ones it documents; returns
 * the quality to send (undefined for none). `user` is not refused anywhere: it names the caller for abuse
 * monitoring and changes no image.
 */
export function refuseUnmapped(request: ImageRequest, target: ProviderTarget, qualities: readonly string[] = []): string | undefined {
  if (request.style !== undefined) throw imageRefused(target, 'the image parameter style', ['style']);
  const { quality } = request;
  if (quality === undefined || qualities.includes(quality)) return quality;
  if (DEFAULT_QUALITIES.has(quality)) return undefined;
  throw imageRefused(target, qualities.length > 0 ? `the image quality ${quality} (only ${qualities.join(', ')})` : `the image quality ${quality}`, ['quality']);
}

/** The canonical WIDTHxHEIGHT as numbers; a size of another shape cannot be sent as width and height. */
export function dimensions(size: string, target: ProviderTarget): { width: number; height: number } {
  const match = /^(\d{1,5})x(\d{1,5})$/.exec(size);
  if (!match) throw imageRefused(target, `the image size ${size} (it takes WIDTHxHEIGHT)`, ['size']);
  return { width: Number(match[1]), height: Number(match[2]) };
}

export function jsonPost(headers: ImageHeaders, target: ProviderTarget, path: string, body: Record<string, unknown>, extra: Record<string, string> = {}): UpstreamRequest {
  return { method: 'POST', path, headers: { ...headers(target), 'content-type': 'application/json', ...extra }, body: JSON.stringify(body) };
}

export function malformedImages(target: ProviderTarget, what: string): GatewayError {
  return new GatewayError('UPSTREAM_ERROR', `${target.slug} returned an image answer without ${what}`, { provider: target.slug });
}

/** The array at `key` of an answer, each item an object; else the answer is malformed. */
export function itemsOf(body: unknown, key: string, target: ProviderTarget): Array<Record<string, unknown>> {
  const list = body && typeof body === 'object' ? (body as Record<string, unknown>)[key] : undefined;
  if (!Array.isArray(list) || list.length === 0) throw malformedImages(target, `${key}[]`);
  return list.map((item) => {
    if (!item || typeof item !== 'object') throw malformedImages(target, `objects in ${key}[]`);
    return item as Record<string, unknown>;
  });
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.length > 0 ? value : undefined);

/** An item's URL (field `urlKey`) or base64 bytes (field `b64Key`); a `data:` URL's bytes are taken as bytes. */
export function providerImage(item: Record<string, unknown>, target: ProviderTarget, keys: { url?: string; b64?: string }, mimeType?: string): ProviderImage {
  const b64 = keys.b64 ? text(item[keys.b64]) : undefined;
  if (b64) return base64Image(b64, mimeType);
  const url = keys.url ? text(item[keys.url]) : undefined;
  if (url) return { url };
  throw malformedImages(target, 'an image URL or bytes');
}

/** Base64 bytes, plain or as a data URL (whose media type then names the image). */
export function base64Image(value: string, mimeType?: string): ProviderImage {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(value);
  if (match) return { b64_json: match[2]!, mimeType: match[1]! };
  return { b64_json: value, ...(mimeType ? { mimeType } : {}) };
}
