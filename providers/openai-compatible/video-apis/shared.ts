/**
 * What the video task APIs of the OpenAI-compatible hosts share: a JSON POST that starts the task and a GET that
 * reads it, with the entry's headers; refusals of what a host cannot make (400 CAPABILITY_NOT_SUPPORTED before
 * any I/O: a video made without the asked first frame, size or length is not the video asked for); the frames a
 * host makes, by ratio and resolution; and the reading of the fields a task answer carries.
 */
import { refused } from '../policy.ts';
import type { VideoRequest } from '../../../core/canonical/video.ts';
import type { ProviderTarget, UpstreamRequest, VideoTranslator } from '../../../core/dispatch/provider.ts';
import { GatewayError } from '../../../core/errors.ts';

export type VideoHeaders = (target: ProviderTarget) => Record<string, string>;

/** A host's video task API: its translator, built on the entry's headers. */
export interface CompatibleVideo {
  translator(headers: VideoHeaders): VideoTranslator;
}

export function videoRefused(target: ProviderTarget, what: string, parameter: string): GatewayError {
  return refused(target, what, { parameters: [parameter] });
}

/** Refuses the canonical fields the host (or `model` on it) has no equivalent of. */
export function refuseFields(request: VideoRequest, target: ProviderTarget, fields: ReadonlyArray<'negative_prompt' | 'seed'>, model?: string): void {
  for (const field of fields) {
    if (request[field] !== undefined) throw videoRefused(target, `the video parameter ${field}${model ? ` on ${model}` : ''}`, field);
  }
}

/** Refuses a length the host does not make, listing the ones it does. */
export function checkSeconds(request: VideoRequest, target: ProviderTarget, allowed: (seconds: number) => boolean, which: string): number | undefined {
  const { seconds } = request;
  if (seconds !== undefined && !allowed(seconds)) throw videoRefused(target, `videos of ${seconds} seconds (${which})`, 'seconds');
  return seconds;
}

export function jsonPost(headers: VideoHeaders, target: ProviderTarget, path: string, body: Record<string, unknown>): UpstreamRequest {
  return { method: 'POST', path, headers: { ...headers(target), 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** A GET carries no content type. */
export function jsonGet(headers: VideoHeaders, target: ProviderTarget, path: string): UpstreamRequest {
  const { 'content-type': _json, ...rest } = headers(target);
  return { method: 'GET', path, headers: rest };
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** A WIDTHxHEIGHT size as numbers and its exact ratio (1280x720: 16:9). */
export function sizeParts(size: string): { width: number; height: number; ratio: string } {
  const [width, height] = size.split('x').map(Number) as [number, number];
  const d = gcd(width, height);
  return { width, height, ratio: `${width / d}:${height / d}` };
}

/**
 * A table of the frames a host makes, `WIDTHxHEIGHT` -> [ratio, resolution], from rows of [resolution, ratio,
 * width, height]: a size is sent as the ratio and resolution of the frame it names, and one naming no frame is
 * refused rather than made at another size.
 */
export function frames(rows: ReadonlyArray<readonly [string, string, number, number]>): ReadonlyMap<string, readonly [string, string]> {
  return new Map(rows.map(([resolution, ratio, width, height]) => [`${width}x${height}`, [ratio, resolution] as const]));
}

export function badVideoAnswer(target: ProviderTarget, what: string): GatewayError {
  return new GatewayError('UPSTREAM_ERROR', `${target.slug} returned a video task answer without ${what}`, { provider: target.slug });
}

export function record(body: unknown): Record<string, unknown> {
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

export const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** A count the answer gives as a number or a numeric string ("5"); undefined otherwise. */
export function count(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** An error as hosts give one ({code, message} or a string): its message, else its code. */
export function errorText(value: unknown): string | undefined {
  if (typeof value === 'string') return text(value);
  const error = record(value);
  return text(error.message) ?? (typeof error.code === 'number' ? String(error.code) : text(error.code));
}
