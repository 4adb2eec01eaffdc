/**
 * One image-generation call to one provider target. A request for more images than the provider makes per call
 * (capabilities.image.maxImages) becomes several calls, one after another, whose images are joined. Asynchronous
 * providers (a prediction, a queue, a task) follow up through the exchange, and each polled answer's progress is
 * reported (core/dispatch/image-progress.ts). The images are then put in the caller's `response_format`: a URL
 * the provider gave is downloaded for `b64_json`, and bytes the provider gave become a `data:` URL for `url`.
 */
import type { CanonicalImageRequest, GeneratedImage, ImageAnswer, ImageRequest, ImageUsage, ProviderImage } from '../canonical/image.ts';
import { tokenCount } from '../canonical/units.ts';
import { GatewayError } from '../errors.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import { badAnswer, exchange, markRouted, unsupported, type CallDeps } from './exchange.ts';
import type { ProgressReport } from './image-progress.ts';
import type { ImageTranslator, ProviderDefinition, ProviderTarget } from './provider.ts';
import { discardBody, readBody } from './upstream.ts';
import { isAbort, transportError } from './upstream-errors.ts';
import { callSignal } from '../pipeline/abort.ts';

const MAX_IMAGES_PER_CALL = 10;

export function imageTranslatorFor(provider: ProviderDefinition): ImageTranslator {
  if (!provider.capabilities.image || !provider.image) throw unsupported(provider.slug, 'image generation', { capability: 'image' });
  return provider.image;
}

export function checkImage(provider: ProviderDefinition): void {
  imageTranslatorFor(provider);
}

/** The images of each call: n split into calls of at most `perCall`. */
export function callSizes(n: number, perCall: number): number[] {
  const sizes: number[] = [];
  for (let left = n; left > 0; left -= perCall) sizes.push(Math.min(left, perCall));
  return sizes;
}

/** Where a provider's image is a URL but the caller wants the bytes: fetched by the gateway, at most maxBytes. */
async function downloaded(deps: CallDeps, target: ProviderTarget, url: string, signal: AbortSignal): Promise<string> {
  if (url.startsWith('data:')) {
    const comma = url.indexOf(',');
    if (comma < 0 || !url.slice(0, comma).endsWith(';base64')) throw badAnswer(target, 'an image data URL that is not base64');
    return url.slice(comma + 1);
  }
  if (!/^https?:\/\//i.test(url)) throw badAnswer(target, 'an image URL that is not http(s)');
  let bytes: Buffer;
  try {
    // The provider's own result URL (a CDN): no credential of the gateway's goes with it.
    const response = await deps.upstream.send(url, { method: 'GET', path: url, headers: {} }, signal);
    if (response.statusCode >= 400) {
      discardBody(response);
      throw badAnswer(target, `an image URL that answered ${response.statusCode}`);
    }
    bytes = await readBody(response, deps.upstream.maxBodyBytes);
  } catch (err) {
    if (isAbort(err) || err instanceof GatewayError) throw err;
    throw transportError(target.slug, err, 'request');
  }
  if (bytes.length === 0) throw badAnswer(target, 'an empty image');
  return bytes.toString('base64');
}

/** One provider image in the caller's format. */
async function rendered(deps: CallDeps, target: ProviderTarget, image: ProviderImage, request: ImageRequest, signal: AbortSignal): Promise<GeneratedImage> {
  const revised = image.revised_prompt ? { revised_prompt: image.revised_prompt } : {};
  if (request.response_format === 'b64_json') {
    const b64 = image.b64_json ?? (image.url ? await downloaded(deps, target, image.url, signal) : undefined);
    if (!b64) throw badAnswer(target, 'an image with neither a URL nor bytes');
    return { b64_json: b64, ...revised };
  }
  if (image.url) return { url: image.url, ...revised };
  if (!image.b64_json) throw badAnswer(target, 'an image with neither a URL nor bytes');
  // The gateway hosts no images: bytes the provider sent back are the URL's own content.
  return { url: `data:${image.mimeType ?? 'image/png'};base64,${image.b64_json}`, ...revised };
}

export async function callImage(ctx: GatewayContext, deps: CallDeps & { imageProgress?: ProgressReport }, provider: ProviderDefinition, target: ProviderTarget): Promise<void> {
  const gw = ctx.state.gw;
  const request = gw.canonical as CanonicalImageRequest;
  const translator = imageTranslatorFor(provider);
  const providerCap = provider.capabilities.image?.maxImages ?? MAX_IMAGES_PER_CALL;
  const modelCap = translator.maxImages?.(target);
  const perCall = modelCap !== undefined && Number.isInteger(modelCap) && modelCap >= 1 ? Math.min(modelCap, providerCap) : providerCap;
  const sizes = callSizes(request.body.n, perCall);
  const report = deps.imageProgress;
  const answers: ImageAnswer[] = [];
  for (const [call, n] of sizes.entries()) {
    const body: ImageRequest = { ...request.body, n };
    const followUp = translator.followUp && ((answer: unknown, t: ProviderTarget, _stream: boolean, step: number) => {
      const next = translator.followUp!(answer, t, step, body);
      const progress = translator.progress?.(answer);
      // Overall progress: the calls done, and this one's share.
      if (report && next && progress !== undefined) report(gw, 'in_progress', (call * 100 + Math.min(Math.max(progress, 0), 100)) / sizes.length);
      return next;
    });
    const answer = await exchange(deps, provider, target, translator.toUpstream(body, target), { stream: false, ...(followUp ? { followUp } : {}) }, callSignal(gw));
    if ('stream' in answer) throw new Error('an image exchange returned a stream');
    const translated = translator.fromUpstream(answer.body, target, body);
    if (!translated || !Array.isArray(translated.images) || translated.images.length === 0) throw badAnswer(target, 'no images');
    answers.push(translated);
  }
  const data = await Promise.all(answers.flatMap((a) => a.images).map((image) => rendered(deps, target, image, request.body, gw.signal)));
  const usage: ImageUsage = { images: data.length, ...(request.body.size ? { size: request.body.size } : {}), ...(request.body.quality ? { quality: request.body.quality } : {}) };
  const prompt = answers.reduce((sum, a) => sum + tokenCount(a.usage?.prompt_tokens), 0);
  const completion = answers.reduce((sum, a) => sum + tokenCount(a.usage?.completion_tokens), 0);
  if (prompt + completion > 0) Object.assign(usage, { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion });
  markRouted(ctx, target, request.model);
  report?.(gw, 'completed', 100);
  gw.result = { object: 'image', created: Math.floor(Date.now() / 1000), data, usage };
}
