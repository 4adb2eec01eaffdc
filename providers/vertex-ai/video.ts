/**
 * Veo on Vertex AI: predictLongRunning (the body Veo shares with the Gemini API, plus seed and storageUri), then
 * POST {model}:fetchPredictOperation {operationName} until done: {response: {videos: [{gcsUri | bytesBase64Encoded,
 * mimeType}]}}. The videos are written to Cloud Storage (options.videoStorageUri, else the files bucket), and the
 * gateway fetches one through the JSON API with the provider's token (authorizeVertex).
 */
import type { VideoTaskState } from '../../core/canonical/video.ts';
import type { ProviderTarget, VideoTranslator } from '../../core/dispatch/provider.ts';
import type { JsonSchema } from '../../core/json-schema.ts';
import { GatewayError } from '../../core/errors.ts';
import { operationName, operationState, veoBody } from '../gemini/veo.ts';
import { refusal } from '../shared/inline-media.ts';
import { headers, isClaude, modelPath, resolved } from './chat.ts';
import { DEFAULT_GCS_PREFIX, objectUrl, parseGsUri } from './storage.ts';

export const vertexVideoOptions: Record<string, JsonSchema> = {
  videoStorageUri: {
    type: 'string', pattern: '^gs://[a-z0-9][a-z0-9._-]{1,220}[a-z0-9](/.*)?$',
    description: 'Video: the Cloud Storage location (gs://bucket/prefix/) Veo writes generated videos to (storageUri); default gs://{gcsBucket}/{gcsPrefix}video/. With neither, video generation on vertex-ai is refused with 400 CAPABILITY_NOT_SUPPORTED.',
  },
};

/** Where Veo writes: the option, else a folder under the files bucket; refused before any I/O without either. */
function storageUri(target: ProviderTarget): string {
  const { videoStorageUri, gcsBucket, gcsPrefix } = target.options as { videoStorageUri?: string; gcsBucket?: string; gcsPrefix?: string };
  if (videoStorageUri) return videoStorageUri;
  if (gcsBucket) return `gs://${gcsBucket}/${gcsPrefix ?? DEFAULT_GCS_PREFIX}video/`;
  throw refusal(target, 'video generation without options.videoStorageUri or options.gcsBucket (the Cloud Storage location Veo writes videos to)', 'video');
}

const videoModelPath = (target: ProviderTarget) => {
  if (isClaude(target)) throw refusal(target, 'video generation with Claude models', 'video');
  return resolved(target, modelPath(target, 'google'));
};

interface VertexVideo { gcsUri?: unknown; bytesBase64Encoded?: unknown; mimeType?: unknown }

function videoOf(response: unknown): VideoTaskState | null {
  const videos = (response as { videos?: unknown } | null)?.videos;
  const video = Array.isArray(videos) ? videos[0] as VertexVideo | null : undefined;
  const contentType = typeof video?.mimeType === 'string' ? video.mimeType : 'video/mp4';
  if (typeof video?.gcsUri === 'string' && parseGsUri(video.gcsUri)) return { status: 'completed', result: { url: video.gcsUri, needsCredential: true, contentType } };
  // Without storageUri Vertex answers the bytes themselves: they are the URL's content, as the image call does.
  if (typeof video?.bytesBase64Encoded === 'string' && video.bytesBase64Encoded !== '') {
    return { status: 'completed', result: { url: `data:${contentType};base64,${video.bytesBase64Encoded}`, contentType } };
  }
  return null;
}

export const vertexVideo: VideoTranslator = {
  create(request, target) {
    const extra = { sampleCount: 1, storageUri: storageUri(target), ...(request.seed !== undefined ? { seed: request.seed } : {}) };
    return { method: 'POST', path: `${videoModelPath(target)}:predictLongRunning`, headers: headers(target), body: JSON.stringify(veoBody(request, target, extra)) };
  },
  created: (body, target) => ({ taskId: operationName(body, target), state: { status: 'queued' } }),
  poll: (taskId, target) => ({
    method: 'POST', path: `${videoModelPath(target)}:fetchPredictOperation`, headers: headers(target), body: JSON.stringify({ operationName: taskId }),
  }),
  state: (body, target) => operationState(body, target, videoOf),
  download(_taskId, resultUrl, target) {
    const object = parseGsUri(resultUrl);
    if (!object) throw new GatewayError('UPSTREAM_ERROR', `${target.slug}: the video ${resultUrl.slice(0, 200)} is not a gs:// URI`, { provider: target.slug });
    return { method: 'GET', path: `${objectUrl(target, object)}?alt=media`, headers: {} };
  },
};
