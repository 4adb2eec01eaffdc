/**
 * Starting one video generation job on one provider target. The translator's create request goes through the
 * exchange like every modality's (retries, fallbacks and breakers are the dispatcher's); the provider's task is
 * then recorded as a gateway job (`video-<uuid>`), in the caller's name, for the `video.poll` sweep
 * (core/api/video-poll.ts) to follow until it ends. The answer is the job as the caller sees it.
 *
 * A provider that fails the task in its create answer fails the call (nothing was made, nothing is recorded);
 * one that says it is done already is recorded as running and due at once, so the sweep records its end and
 * meters it like any other.
 */
import type { CanonicalVideoRequest, VideoStatus } from '../canonical/video.ts';
import { GatewayError } from '../errors.ts';
import type { GatewayContext } from '../pipeline/context.ts';
import { callerOf } from '../pipeline/recorded-caller.ts';
import type { Queryable } from '../store/database.ts';
import { insertVideoJob, newVideoJobId, videoJobObject } from '../store/video-jobs.ts';
import { badAnswer, exchangeJson, markRouted, unsupported, type CallDeps } from './exchange.ts';
import type { ProviderDefinition, ProviderTarget, VideoTranslator } from './provider.ts';
import type { RoutingTable } from './routing.ts';
import { callSignal } from '../pipeline/abort.ts';

export interface VideoCallDeps extends CallDeps {
  db: Queryable;
  now: () => number;
  /** Names the configured model the request resolved to (after the caller's overrides): its pricing prices the job. */
  routing: Pick<RoutingTable, 'resolve'>;
}

export function videoTranslatorFor(provider: ProviderDefinition): VideoTranslator {
  if (!provider.capabilities.video || !provider.video) throw unsupported(provider.slug, 'video generation', { capability: 'video' });
  return provider.video;
}

export function checkVideo(provider: ProviderDefinition): void {
  videoTranslatorFor(provider);
}

const clampProgress = (value: number | undefined) => (typeof value === 'number' && Number.isFinite(value) ? Math.min(Math.max(value, 0), 100) : 0);

export async function callVideo(ctx: GatewayContext, deps: VideoCallDeps, provider: ProviderDefinition, target: ProviderTarget): Promise<void> {
  const gw = ctx.state.gw;
  const request = gw.canonical as CanonicalVideoRequest;
  const translator = videoTranslatorFor(provider);
  const answer = await exchangeJson(deps, provider, target, translator.create(request.body, target), callSignal(gw));
  const { taskId, state } = translator.created(answer, target, request.body);
  if (typeof taskId !== 'string' || taskId === '') throw badAnswer(target, 'a video task without an id');
  if (state.status === 'failed') {
    throw new GatewayError('UPSTREAM_ERROR', `${target.slug} failed the video task: ${state.error ?? 'no reason given'}`, { provider: target.slug });
  }
  const status: VideoStatus = state.status === 'completed' ? 'in_progress' : state.status;
  const now = deps.now();
  const record = await insertVideoJob(deps.db, newVideoJobId(), {
    ...callerOf(ctx),
    requestedModel: request.model, model: deps.routing.resolve(request.model, gw.caller?.policy).modelId,
    provider: target.slug, upstreamModel: target.upstreamModel, providerTaskId: taskId, prompt: request.body.prompt,
    status, progress: clampProgress(state.progress), secondsRequested: request.body.seconds ?? null,
    // Due at the sweep's next run; it spaces the polls that follow (video.pollIntervalMs).
    createdAt: now, nextPollAt: now,
  });
  markRouted(ctx, target, request.model);
  gw.result = videoJobObject(record, null);
}
