/**
 * Veo video generation. The Gemini API and Vertex AI start it alike: POST {model}:predictLongRunning with
 * {instances: [{prompt, image?}], parameters: {aspectRatio, resolution, durationSeconds, negativePrompt,
 * personGeneration, ...}} answers a long-running operation {name}. They differ after that: the Gemini API's
 * operation is read with GET {name} and its video is a URI that takes the API key; Vertex's is read with
 * fetchPredictOperation (providers/vertex-ai/video.ts).
 */
import type { VideoRequest, VideoTaskState } from '../../core/canonical/video.ts';
import type { ProviderTarget, UpstreamRequest, VideoTranslator } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { malformedAnswer } from '../shared/embeddings.ts';
import { withoutContentType } from '../shared/files.ts';
import { inlineImage, parseSize, ratioOf, refusal } from '../shared/inline-media.ts';
import { generativeLanguageModelPath, geminiApiHeaders } from './chat.ts';
import { personGeneration } from './images.ts';

const VEO_RATIOS = ['16:9', '9:16'] as const;

/** The body of predictLongRunning; `extra` holds what only one API takes (Vertex's seed and storageUri). */
export function veoBody(request: VideoRequest, target: ProviderTarget, extra: Record<string, unknown> = {}): unknown {
  if (request.aspect_ratio !== undefined && !(VEO_RATIOS as readonly string[]).includes(request.aspect_ratio)) {
    throw refusal(target, `the aspect ratio ${request.aspect_ratio} (Veo makes 16:9 and 9:16)`, 'aspect_ratio');
  }
  if (request.seconds !== undefined && !Number.isInteger(request.seconds)) throw refusal(target, `a length of ${request.seconds} seconds (Veo takes whole seconds)`, 'seconds');
  const size = request.size ? parseSize(request.size) : null;
  const aspectRatio = request.aspect_ratio ?? (request.size ? ratioOf(target, request.size, VEO_RATIOS) : undefined);
  const person = personGeneration(target);
  const image = request.image === undefined ? undefined : inlineImage(target, request.image);
  return {
    instances: [{ prompt: request.prompt, ...(image ? { image: { bytesBase64Encoded: image.base64, mimeType: image.mimeType } } : {}) }],
    parameters: {
      ...(aspectRatio ? { aspectRatio } : {}),
      // 720p is every Veo model's default; only Veo 3 models make 1080p, so it is asked for only when wanted.
      ...(size && Math.min(size.width, size.height) >= 1080 ? { resolution: '1080p' } : {}),
      ...(request.seconds !== undefined ? { durationSeconds: request.seconds } : {}),
      ...(request.negative_prompt ? { negativePrompt: request.negative_prompt } : {}),
      ...(person ? { personGeneration: person } : {}),
      ...extra,
    },
  };
}

interface Operation { name?: unknown; done?: unknown; error?: { code?: unknown; message?: unknown }; response?: unknown }

export function operationName(body: unknown, target: ProviderTarget): string {
  const name = (body as Operation | null)?.name;
  if (typeof name !== 'string' || name === '') throw malformedAnswer(target, 'long-running operation (no name)');
  return name;
}

/**
 * The state every Veo operation shares: running until done, failed with its error. `videoOf` reads a finished
 * operation's response (null when it holds no video).
 */
export function operationState(body: unknown, target: ProviderTarget, videoOf: (response: unknown) => VideoTaskState | null): VideoTaskState {
  const operation = body as Operation | null;
  if (!operation || typeof operation !== 'object') throw malformedAnswer(target, 'long-running operation');
  if (operation.error) {
    const message = typeof operation.error.message === 'string' && operation.error.message !== '' ? operation.error.message : `error ${String(operation.error.code ?? 'unknown')}`;
    return { status: 'failed', error: message };
  }
  if (operation.done !== true) return { status: 'in_progress' };
  const video = videoOf(operation.response);
  if (video) return video;
  return { status: 'failed', error: `no video was generated${filteredReasons(operation.response)}` };
}

/** Videos Veo's safety filters removed leave a count and, sometimes, the reasons. */
function filteredReasons(response: unknown): string {
  const r = (response as { generateVideoResponse?: unknown } | null)?.generateVideoResponse ?? response;
  const { raiMediaFilteredCount, raiMediaFilteredReasons } = (r ?? {}) as { raiMediaFilteredCount?: unknown; raiMediaFilteredReasons?: unknown };
  if (Array.isArray(raiMediaFilteredReasons) && raiMediaFilteredReasons.length > 0) return `: ${raiMediaFilteredReasons.filter((x) => typeof x === 'string').join('; ')}`;
  return typeof raiMediaFilteredCount === 'number' && raiMediaFilteredCount > 0 ? ' (filtered by the provider\'s safety filters)' : '';
}

/** GET {name}: an operation name is a resource path under the base URL (models/veo-.../operations/abc). */
const resourcePath = (name: string) => `/${name.split('/').map(encodeURIComponent).join('/')}`;

export const geminiVideo: VideoTranslator = {
  create(request, target) {
    // The Gemini API refuses a seed for Veo (only Vertex AI takes one).
    if (request.seed !== undefined) throw refusal(target, 'seed for video generation (Vertex AI does)', 'seed');
    return {
      method: 'POST',
      path: `${generativeLanguageModelPath(target)}:predictLongRunning`,
      headers: geminiApiHeaders(target),
      body: JSON.stringify(veoBody(request, target)),
    };
  },
  created: (body, target) => ({ taskId: operationName(body, target), state: { status: 'queued' } }),
  poll: (taskId, target): UpstreamRequest => ({ method: 'GET', path: resourcePath(taskId), headers: withoutContentType(geminiApiHeaders(target)) }),
  state: (body, target) => operationState(body, target, (response) => {
    const samples = (response as { generateVideoResponse?: { generatedSamples?: unknown } } | null)?.generateVideoResponse?.generatedSamples;
    const uri = Array.isArray(samples) ? (samples[0] as { video?: { uri?: unknown } } | null)?.video?.uri : undefined;
    return typeof uri === 'string' && uri !== '' ? { status: 'completed', result: { url: uri, needsCredential: true, contentType: 'video/mp4' } } : null;
  }),
  download(_taskId, resultUrl, target) {
    // The key goes only to the API's own origin, whatever URL an answer names.
    if (!URL.canParse(resultUrl) || new URL(resultUrl).origin !== new URL(target.baseUrl).origin) {
      throw new GatewayError('UPSTREAM_ERROR', `${target.slug} named a video outside its API (${resultUrl.slice(0, 200)}): not fetched with its key`, { provider: target.slug });
    }
    return { method: 'GET', path: resultUrl, headers: withoutContentType(geminiApiHeaders(target)) };
  },
};
