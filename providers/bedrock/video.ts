/**
 * Video on Bedrock: Amazon Nova Reel through StartAsyncInvoke (POST /async-invoke {modelId, modelInput,
 * outputDataConfig: {s3OutputDataConfig: {s3Uri}}} -> {invocationArn}), polled with GetAsyncInvoke (GET
 * /async-invoke/{arn}: status InProgress | Completed | Failed). The video is {s3Uri}/output.mp4 in the bucket the
 * options name, fetched through S3 with the AWS credentials (the provider's authorize signs it for S3).
 */
import type { VideoRequest } from '../../core/canonical/video.ts';
import type { ProviderTarget, VideoTranslator } from '../../core/dispatch/provider.ts';
import type { JsonSchema } from '../../core/json-schema.ts';
import { GatewayError } from '../../core/errors.ts';
import { inlineImage, refusal } from '../shared/inline-media.ts';
import { DEFAULT_S3_PREFIX, optionsOf } from './endpoints.ts';
import { malformed } from './errors.ts';
import { getObject, parseS3Uri } from './s3.ts';
import { uriEncode } from './sigv4.ts';

export const bedrockVideoOptions: Record<string, JsonSchema> = {
  videoOutputS3Uri: {
    type: 'string', pattern: '^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?$',
    description: 'Video: the S3 location (s3://bucket/prefix/) Nova Reel writes generated videos to; default s3://{s3Bucket}/{s3Prefix}video/. The gateway reads the videos back with the AWS credentials. With neither, video generation on bedrock is refused with 400 CAPABILITY_NOT_SUPPORTED.',
  },
};

/** Nova Reel makes 6-second shots at 1280x720, 24 frames a second; v1.1 joins shots up to 2 minutes. */
const SHOT_SECONDS = 6;
const MAX_SECONDS = 120;
const DIMENSION = '1280x720';
const FPS = 24;

function outputUri(target: ProviderTarget): string {
  const { videoOutputS3Uri, s3Bucket, s3Prefix } = optionsOf(target);
  if (videoOutputS3Uri) return videoOutputS3Uri;
  if (s3Bucket) return `s3://${s3Bucket}/${s3Prefix ?? DEFAULT_S3_PREFIX}video/`;
  throw refusal(target, 'video generation without options.videoOutputS3Uri or options.s3Bucket (the S3 location Nova Reel writes videos to)', 'video');
}

const isNovaReel = (upstreamModel: string) => /(?:^|\.)amazon\.nova-reel/.test(upstreamModel.split('/').at(-1)!);

function firstFrame(target: ProviderTarget, image: string): unknown {
  const { mimeType, base64 } = inlineImage(target, image);
  const format = mimeType === 'image/png' ? 'png' : mimeType === 'image/jpeg' ? 'jpeg' : null;
  if (!format) throw refusal(target, `a first-frame image of type ${mimeType} (PNG or JPEG)`, 'image');
  return { format, source: { bytes: base64 } };
}

export function novaReelInput(request: VideoRequest, target: ProviderTarget): unknown {
  if (!isNovaReel(target.upstreamModel)) throw refusal(target, `video generation with ${target.upstreamModel} (Amazon Nova Reel models do)`, 'video');
  if (request.size !== undefined && request.size !== DIMENSION) throw refusal(target, `the size ${request.size} (Nova Reel makes ${DIMENSION})`, 'size');
  if (request.aspect_ratio !== undefined && request.aspect_ratio !== '16:9') throw refusal(target, `the aspect ratio ${request.aspect_ratio} (Nova Reel makes 16:9)`, 'aspect_ratio');
  if (request.negative_prompt !== undefined) throw refusal(target, 'negative_prompt with Nova Reel', 'negative_prompt');
  const seconds = request.seconds ?? SHOT_SECONDS;
  if (!Number.isInteger(seconds) || seconds % SHOT_SECONDS !== 0 || seconds < SHOT_SECONDS || seconds > MAX_SECONDS) {
    throw refusal(target, `a length of ${seconds} seconds (Nova Reel makes multiples of ${SHOT_SECONDS} seconds up to ${MAX_SECONDS})`, 'seconds');
  }
  const config = { durationSeconds: seconds, fps: FPS, dimension: DIMENSION, ...(request.seed !== undefined ? { seed: request.seed } : {}) };
  if (seconds === SHOT_SECONDS) {
    const images = request.image === undefined ? undefined : [firstFrame(target, request.image)];
    return { taskType: 'TEXT_VIDEO', textToVideoParams: { text: request.prompt, ...(images ? { images } : {}) }, videoGenerationConfig: config };
  }
  // Longer videos are several shots the model plans from one prompt (Nova Reel v1.1), with no first frame.
  if (request.image !== undefined) throw refusal(target, `a first-frame image with a video longer than ${SHOT_SECONDS} seconds`, 'image');
  return { taskType: 'MULTI_SHOT_AUTOMATED', multiShotAutomatedParams: { text: request.prompt }, videoGenerationConfig: config };
}

const jsonHeaders = (target: ProviderTarget) => ({ 'content-type': 'application/json', accept: 'application/json', ...target.headers });

export const bedrockVideo: VideoTranslator = {
  create(request, target) {
    const body = { modelId: target.upstreamModel, modelInput: novaReelInput(request, target), outputDataConfig: { s3OutputDataConfig: { s3Uri: outputUri(target) } } };
    return { method: 'POST', path: '/async-invoke', headers: jsonHeaders(target), body: JSON.stringify(body) };
  },
  created(body, target) {
    const arn = (body as { invocationArn?: unknown } | null)?.invocationArn;
    if (typeof arn !== 'string' || arn === '') throw malformed(target, 'StartAsyncInvoke answer (no invocationArn)');
    return { taskId: arn, state: { status: 'queued' } };
  },
  // The ARN holds ':' and '/': one path segment, percent-encoded.
  poll: (taskId, target) => ({ method: 'GET', path: `/async-invoke/${uriEncode(taskId)}`, headers: { accept: 'application/json', ...target.headers } }),
  state(body, target) {
    const answer = body as { status?: unknown; failureMessage?: unknown; outputDataConfig?: { s3OutputDataConfig?: { s3Uri?: unknown } } } | null;
    switch (answer?.status) {
      case 'InProgress': return { status: 'in_progress' };
      case 'Failed': return { status: 'failed', error: typeof answer.failureMessage === 'string' && answer.failureMessage !== '' ? answer.failureMessage : 'the invocation failed' };
      case 'Completed': {
        const uri = answer.outputDataConfig?.s3OutputDataConfig?.s3Uri;
        if (typeof uri !== 'string' || !parseS3Uri(uri)) throw malformed(target, 'GetAsyncInvoke answer (a completed invocation without its s3Uri)');
        return { status: 'completed', result: { url: `${uri.replace(/\/+$/, '')}/output.mp4`, needsCredential: true, contentType: 'video/mp4' } };
      }
      default: throw malformed(target, `GetAsyncInvoke answer (status ${JSON.stringify(answer?.status)})`);
    }
  },
  download(_taskId, resultUrl, target) {
    const location = parseS3Uri(resultUrl);
    if (!location || location.key === '') throw new GatewayError('UPSTREAM_ERROR', `${target.slug}: the video ${resultUrl.slice(0, 200)} is not an s3:// object`, { provider: target.slug });
    return getObject(target, location);
  },
};
