/**
 * The `video.poll` job: one recurring sweep serves the whole deployment (every instance enqueues it at start
 * under one fixed key; the runner's lease gives each run to one instance). Each run asks the provider for the
 * state of every running job that is due (video_jobs.next_poll_at), at most SWEEP_SIZE of them, and records what
 * it sees. A job's end is recorded once (conditional on it still running) and reported as metered work, whose id
 * is the job's: the plugins take it once however often it is reported, and the job is marked metered only once
 * they all took it, so a report that failed is made again by a later run.
 *
 * A poll that fails transiently (a 5xx, a timeout, an open breaker, a refused credential) is retried after a
 * growing delay; any other provider error (the task is gone) fails the job. So does a provider no longer
 * configured, and a job still running video.maxJobMinutes after it started (UPSTREAM_TIMEOUT).
 */
import type { VideoTaskState } from '../canonical/video.ts';
import type { GatewayConfig } from '../config/types.ts';
import { exchange, type CallDeps } from '../dispatch/exchange.ts';
import { passthroughTargets, type PassthroughEntry } from '../dispatch/passthrough.ts';
import type { ProviderRegistry } from '../dispatch/provider-registry.ts';
import { shouldFallBack } from '../dispatch/upstream-errors.ts';
import { GatewayError } from '../errors.ts';
import type { JobContext, JobHandler, JobQueue, JobSpec } from '../jobs/types.ts';
import type { Log } from '../log.ts';
import type { MeteredWork } from '../pipeline/metered.ts';
import type { Queryable } from '../store/database.ts';
import { dueVideoJobs, endVideoJob, markMetered, savePollFailure, saveProgress, type VideoEnd, type VideoJobRecord } from '../store/video-jobs.ts';

export const VIDEO_POLL = 'video.poll';

/** The deployment's one sweep job: its fixed key makes every instance's enqueue name the same job. */
export const videoPollJob: JobSpec = { kind: VIDEO_POLL, key: VIDEO_POLL, payload: {} };

/** Jobs one run handles; a full run is followed by another at once. */
const SWEEP_SIZE = 50;
/** Jobs one run polls at once. */
const POLL_CONCURRENCY = 8;
/** A failing provider is asked again after pollIntervalMs doubled per failure in a row, at most this many times it. */
const MAX_BACKOFF_FACTOR = 16;

export interface VideoJobDeps {
  config: GatewayConfig;
  db: Queryable;
  providers: ProviderRegistry;
  call: CallDeps;
  logger: Log;
  /** The gateway's meterWork: rejects when a plugin could not record the work, and a later run reports it again. */
  meterWork(work: MeteredWork): Promise<void>;
}

export function videoWork(job: VideoJobRecord): MeteredWork {
  const completed = job.status === 'completed';
  return {
    id: job.id, source: 'video',
    tenantId: job.tenantId, organizationId: job.organizationId, departmentId: job.departmentId,
    callerKind: job.callerKind, apiKeyId: job.apiKeyId, userId: job.userId,
    endpoint: '/v1/video/generations', modality: 'video', provider: job.provider,
    requestedModel: job.requestedModel, model: job.model, upstreamModel: job.upstreamModel,
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    // The provider's count when it gives one, else what was asked; a failed job made nothing.
    videoSeconds: completed ? job.secondsMade ?? job.secondsRequested ?? 0 : 0,
    requests: { total: 1, completed: completed ? 1 : 0, failed: completed ? 0 : 1 },
    status: completed ? 'completed' : 'failed',
    startedAt: job.createdAt, endedAt: job.completedAt ?? job.createdAt,
  };
}

const failure = (code: string, message: string, at: number): VideoEnd => ({ status: 'failed', error: { code, message }, completedAt: at });

/** What one status request says about the job: its end, or null when it still runs (its progress then saved). */
async function poll(deps: VideoJobDeps, entry: PassthroughEntry, job: VideoJobRecord, ctx: JobContext): Promise<VideoEnd | null> {
  const translator = entry.provider.video;
  const now = ctx.now();
  if (!entry.provider.capabilities.video || !translator) return failure('UPSTREAM_ERROR', `the provider ${job.provider} no longer serves video generation`, now);
  const target = { ...entry.target, upstreamModel: job.upstreamModel };
  const interval = deps.config.video.pollIntervalMs;
  let state: VideoTaskState;
  try {
    const taskId = job.providerTaskId;
    const followUp = translator.followUp && ((body: unknown, t: typeof target) => translator.followUp!(body, t, taskId));
    const polled = await exchange(deps.call, entry.provider, target, translator.poll(taskId, target), { stream: false, ...(followUp ? { followUp } : {}) }, ctx.signal);
    if ('stream' in polled) throw new Error('a video poll returned a stream');
    const answer = polled.body;
    state = translator.state(answer, target, job.providerTaskId);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    // The provider's own refusal (the task is gone): asking again would get the same answer.
    if (err instanceof GatewayError && !shouldFallBack(err)) return failure(err.code, err.message, ctx.now());
    const factor = Math.min(2 ** (job.pollAttempts + 1), MAX_BACKOFF_FACTOR);
    deps.logger.warn({ videoJob: job.id, provider: job.provider, err }, 'video poll failed; asking again later');
    await savePollFailure(deps.db, job.id, ctx.now() + interval * factor);
    return null;
  }
  if (state.status === 'failed') return failure('UPSTREAM_ERROR', `${job.provider} failed the video: ${state.error ?? 'no reason given'}`, ctx.now());
  if (state.status === 'completed') {
    if (!state.result?.url) return failure('UPSTREAM_ERROR', `${job.provider} completed the video without saying where it is`, ctx.now());
    const made = typeof state.seconds === 'number' && Number.isFinite(state.seconds) && state.seconds >= 0 ? { secondsMade: state.seconds } : {};
    return {
      status: 'completed', resultUrl: state.result.url, needsCredential: state.result.needsCredential === true, completedAt: ctx.now(),
      ...(state.result.contentType ? { resultContentType: state.result.contentType } : {}), ...made,
    };
  }
  const progress = typeof state.progress === 'number' && Number.isFinite(state.progress) ? Math.min(Math.max(state.progress, 0), 100) : job.progress;
  // Only forwards: a provider that says queued after it said in_progress changes nothing.
  const status = job.status === 'in_progress' ? 'in_progress' : state.status;
  await saveProgress(deps.db, job.id, { status, progress: Math.max(progress, job.progress), nextPollAt: ctx.now() + interval });
  return null;
}

/** Reports an ended job's metered work and marks it; a plugin that failed leaves it for the next run. */
async function meter(deps: VideoJobDeps, job: VideoJobRecord): Promise<void> {
  try {
    await deps.meterWork(videoWork(job));
  } catch (err) {
    deps.logger.warn({ videoJob: job.id, err }, 'video job metering failed; the next sweep reports it again');
    return;
  }
  await markMetered(deps.db, job.id);
}

async function handle(deps: VideoJobDeps, targets: Map<string, PassthroughEntry>, job: VideoJobRecord, ctx: JobContext): Promise<void> {
  if (job.status === 'completed' || job.status === 'failed') return meter(deps, job);
  const now = ctx.now();
  const entry = targets.get(job.provider);
  let end: VideoEnd | null;
  if (now - job.createdAt > deps.config.video.maxJobMinutes * 60_000) {
    end = failure('UPSTREAM_TIMEOUT', `the video did not complete within ${deps.config.video.maxJobMinutes} minutes`, now);
  } else if (!entry) {
    end = failure('UPSTREAM_ERROR', `the provider ${job.provider} of this job is no longer configured on the gateway`, now);
  } else {
    end = await poll(deps, entry, job, ctx);
  }
  if (!end) return;
  const ended = await endVideoJob(deps.db, job.id, end);
  if (ended) await meter(deps, ended);
}

export function videoPollHandler(deps: VideoJobDeps): JobHandler {
  return async (ctx) => {
    const interval = deps.config.video.pollIntervalMs;
    let full = false;
    try {
      const targets = passthroughTargets(deps.config, deps.providers);
      const due = await dueVideoJobs(deps.db, ctx.now(), SWEEP_SIZE);
      // Only running jobs count: ended ones whose metering keeps failing must not make the sweep spin.
      full = due.filter((job) => job.status === 'queued' || job.status === 'in_progress').length >= SWEEP_SIZE;
      // A few at once: one slow provider must not hold back every other job's poll.
      const queue = [...due];
      const worker = async () => {
        for (let job = queue.shift(); job && !ctx.signal.aborted; job = queue.shift()) {
          await handle(deps, targets, job, ctx).catch((err: unknown) => {
            if (!ctx.signal.aborted) deps.logger.warn({ err, videoJob: job!.id }, 'video.poll: a job could not be handled; the next sweep tries again');
          });
        }
      };
      await Promise.all(Array.from({ length: POLL_CONCURRENCY }, worker));
    } catch (err) {
      // The database, most likely: a recurring job must not fail for good, so the next run tries again.
      if (!ctx.signal.aborted) deps.logger.warn({ err }, 'video.poll: the sweep failed; the next one tries again');
    }
    return { status: 'reschedule', at: ctx.now() + (full ? 0 : interval) };
  };
}

/** Registers the sweep on the runner and enqueues it (a no-op when it is live already, from any instance). */
export async function registerVideoJobs(runner: JobQueue & { register(kind: string, handler: JobHandler): void }, deps: VideoJobDeps): Promise<void> {
  runner.register(VIDEO_POLL, videoPollHandler(deps));
  await runner.enqueue(videoPollJob);
}
