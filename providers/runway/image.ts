/**
 * Runway image generation: POST /text_to_image `{model, promptText, ratio}` starts a task of one image, polled at
 * GET /tasks/{id} until SUCCEEDED (its `output` URLs, public for a day or two) or FAILED/CANCELLED. `size`
 * WIDTHxHEIGHT is sent as the ratio `W:H`, which for Runway is the output resolution; a gen4_image size
 * outside the resolutions it makes is refused before any I/O. A RUNNING task's progress (0-1) is reported as a
 * percentage. gen4_image_turbo needs reference images, which the canonical request has no room for.
 */
import type { ImageRequest } from '../../core/canonical/image.ts';
import type { FollowUp, ImageTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { refuseImageFields } from '../openai/images.ts';
import { isRecord } from '../shared/transcripts.ts';
import { asTask, createdId, createTask, DEFAULT_POLL_INTERVAL_MS, malformed, percent, pixelRatio, readTask, taskError, type RunwayOptions } from './tasks.ts';

/** The resolutions gen4_image makes. */
export const GEN4_IMAGE_RATIOS = [
  '1920:1080', '1080:1920', '1024:1024', '1360:768', '1080:1080', '1168:880', '1440:1080', '1080:1440',
  '1808:768', '2112:912', '1280:720', '720:1280', '720:720', '960:720', '720:960', '1680:720',
] as const;
/** The canonical default size (1024x1024), which gen4_image makes too. */
const DEFAULT_RATIO = '1024:1024';

const invalid = (path: string, message: string) => new GatewayError('VALIDATION_ERROR', message, [{ path, message }]);

function ratioOf(request: ImageRequest, target: ProviderTarget): string {
  if (request.size === undefined) return DEFAULT_RATIO;
  const ratio = pixelRatio(request.size);
  if (!ratio) throw invalid('/size', `size must be WIDTHxHEIGHT, got "${request.size}"`);
  if (target.upstreamModel === 'gen4_image' && !(GEN4_IMAGE_RATIOS as readonly string[]).includes(ratio)) {
    throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${target.slug}: size ${request.size} is not one gen4_image makes (${GEN4_IMAGE_RATIOS.map((r) => r.replace(':', 'x')).join(', ')})`, { provider: target.slug, parameters: ['size'] });
  }
  return ratio;
}

function poll(id: string, target: ProviderTarget): FollowUp {
  return { request: readTask(id, target), delayMs: (target.options as RunwayOptions).pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS };
}

export const runwayImage: ImageTranslator = {
  toUpstream(request, target) {
    if (target.upstreamModel === 'gen4_image_turbo') {
      throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${target.slug} does not support gen4_image_turbo here: it needs reference images, which POST /v1/images/generations does not carry`, { provider: target.slug, capability: 'image' });
    }
    // gen4_image has neither a quality nor a style setting: asked for, they are refused, not dropped.
    refuseImageFields(request, target, ['quality', 'style']);
    return createTask(target, '/text_to_image', { model: target.upstreamModel, promptText: request.prompt, ratio: ratioOf(request, target) });
  },
  followUp(body, target) {
    // The create answer is `{id}` alone: read the task. A task answer carries its status.
    if (typeof (body as { status?: unknown } | null)?.status !== 'string') return poll(createdId(body, target), target);
    const task = asTask(body, target);
    switch (task.status) {
      case 'SUCCEEDED': return null;
      case 'FAILED':
      case 'CANCELLED': throw taskError(task, target);
      default: return poll(task.id, target);
    }
  },
  progress: (body) => (isRecord(body) ? percent(body) : undefined),
  fromUpstream(body, target) {
    const task = asTask(body, target);
    const urls = Array.isArray(task.output) ? task.output.filter((u): u is string => typeof u === 'string' && u !== '') : [];
    if (task.status !== 'SUCCEEDED' || urls.length === 0) throw malformed(target, 'a finished task without output');
    return { images: urls.map((url) => ({ url })) };
  },
};
