/**
 * What image and video translators of providers that take bytes inline (Google's Imagen and Veo, Amazon's Nova)
 * share: a `data:` URI read as base64 bytes, a WIDTHxHEIGHT size read as numbers or as the nearest aspect ratio a
 * model offers, and the refusal of what a provider cannot do, before any I/O.
 */
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';

export function refusal(target: ProviderTarget, what: string, capability: string): GatewayError {
  return new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${target.slug} does not support ${what}`, { provider: target.slug, capability });
}

/** `data:image/png;base64,AAAA` -> its type and base64 bytes; null for anything else (an https URL). */
export function parseDataUri(uri: string): { mimeType: string; base64: string } | null {
  const match = /^data:([\w.+-]+\/[\w.+-]+)(?:;[^,;]*)*;base64,([A-Za-z0-9+/=\s]+)$/.exec(uri);
  return match ? { mimeType: match[1]!.toLowerCase(), base64: match[2]!.replace(/\s+/g, '') } : null;
}

/**
 * The first frame of an image-to-video request as bytes. These providers take the image inline (or from their
 * own storage), never from a URL, and the translator does no I/O: an https URL is refused with that reason.
 */
export function inlineImage(target: ProviderTarget, image: string): { mimeType: string; base64: string } {
  const inline = parseDataUri(image);
  if (!inline) throw refusal(target, 'a first-frame image by URL (send it as a data: URI with base64 bytes)', 'image');
  return inline;
}

export function parseSize(size: string): { width: number; height: number } | null {
  const match = /^(\d{1,5})x(\d{1,5})$/.exec(size);
  if (!match) return null;
  const width = Number(match[1]);
  const height = Number(match[2]);
  return width > 0 && height > 0 ? { width, height } : null;
}

const ratioValue = (ratio: string) => {
  const [w, h] = ratio.split(':').map(Number);
  return w! / h!;
};

/**
 * The ratio among `ratios` nearest to the size's, when within 10% of it: OpenAI's 1792x1024 is 16:9 to these
 * models (they take a ratio, not pixels), while a size no offered ratio comes near is refused rather than bent.
 */
export function ratioOf(target: ProviderTarget, size: string, ratios: readonly string[]): string {
  const parsed = parseSize(size);
  if (parsed) {
    const wanted = parsed.width / parsed.height;
    let best: { ratio: string; off: number } | null = null;
    for (const ratio of ratios) {
      const off = Math.abs(ratioValue(ratio) - wanted) / wanted;
      if (!best || off < best.off) best = { ratio, off };
    }
    if (best && best.off <= 0.1) return best.ratio;
  }
  throw refusal(target, `the size ${size} with ${target.upstreamModel} (aspect ratios ${ratios.join(', ')})`, 'size');
}
