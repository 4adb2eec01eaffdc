/**
 * Runway's task API, shared by images and video: a POST starts a task (`{id}`), GET /tasks/{id} reads it:
 * `{id, status, progress (0-1, while RUNNING), output: [url] (SUCCEEDED), failure, failureCode (FAILED)}`.
 * Runway asks that a task be read no more often than every five seconds, hence the default poll interval.
 * Every request carries the API version this translator was written against (`X-Runway-Version`).
 */
import type { ProviderTarget, UpstreamRequest } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { isRecord } from '../shared/transcripts.ts';

export const RUNWAY_VERSION = '2024-11-06';
export const DEFAULT_POLL_INTERVAL_MS = 5000;

export interface RunwayOptions {
  pollIntervalMs?: number;
}

export const TASK_STATUSES = ['PENDING', 'THROTTLED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export interface RunwayTask {
  id: string;
  status: TaskStatus;
  progress?: number;
  output?: string[];
  failure?: string;
  failureCode?: string;
}

export function runwayHeaders(target: ProviderTarget, json: boolean): Record<string, string> {
  return {
    ...target.headers,
    'x-runway-version': RUNWAY_VERSION,
    ...(json ? { 'content-type': 'application/json' } : {}),
    ...(target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}),
  };
}

export const malformed = (target: ProviderTarget, what: string) =>
  new GatewayError('UPSTREAM_ERROR', `${target.slug} returned ${what}`, { provider: target.slug });

export function createTask(target: ProviderTarget, path: string, body: Record<string, unknown>): UpstreamRequest {
  return { method: 'POST', path, headers: runwayHeaders(target, true), body: JSON.stringify(body) };
}

export function readTask(taskId: string, target: ProviderTarget): UpstreamRequest {
  return { method: 'GET', path: `/tasks/${encodeURIComponent(taskId)}`, headers: runwayHeaders(target, false) };
}

/** The id of a create answer (`{id}`). */
export function createdId(body: unknown, target: ProviderTarget): string {
  if (!isRecord(body) || typeof body.id !== 'string' || body.id === '') throw malformed(target, 'a task creation answer without an id');
  return body.id;
}

export function asTask(body: unknown, target: ProviderTarget): RunwayTask {
  if (!isRecord(body) || typeof body.id !== 'string' || !(TASK_STATUSES as readonly string[]).includes(String(body.status))) {
    throw malformed(target, 'a task that is not one (no id, or an unknown status)');
  }
  return body as unknown as RunwayTask;
}

/** A RUNNING task's progress, 0 to 100. */
export function percent(task: { status?: unknown; progress?: unknown }): number | undefined {
  return task.status === 'RUNNING' && typeof task.progress === 'number' && Number.isFinite(task.progress)
    ? Math.min(Math.max(task.progress, 0), 1) * 100
    : undefined;
}

/** Why a task failed, as one line: `SAFETY.INPUT.TEXT: reason`. */
export function failureOf(task: RunwayTask): string {
  const reason = task.failure || (task.status === 'CANCELLED' ? 'the task was cancelled' : 'no reason given');
  return task.failureCode ? `${task.failureCode}: ${reason}` : reason;
}

/**
 * A task that ended without output, as the caller's error. Runway's failure codes are dot-separated, the most
 * generic first: SAFETY.* is the content moderation refusing the input or output, which another attempt with the
 * same prompt would meet again; the rest (INTERNAL.*, ASSET.*, a cancellation) is Runway's failure.
 */
export function taskError(task: RunwayTask, target: ProviderTarget): GatewayError {
  const details = { provider: target.slug, upstreamStatus: 200, upstreamError: { id: task.id, status: task.status, failure: task.failure ?? null, failureCode: task.failureCode ?? null } };
  if (task.failureCode?.startsWith('SAFETY')) {
    return new GatewayError('UPSTREAM_BAD_REQUEST', `${target.slug}: the task was refused by Runway's content moderation (${failureOf(task)})`, details);
  }
  return new GatewayError('UPSTREAM_ERROR', `${target.slug}: the task ${task.status === 'CANCELLED' ? 'was cancelled' : 'failed'} (${failureOf(task)})`, details);
}

/** WIDTHxHEIGHT -> Runway's `W:H`; null when it is not a size. */
export function pixelRatio(size: string): string | null {
  const match = /^(\d+)x(\d+)$/.exec(size);
  return match && Number(match[1]) > 0 && Number(match[2]) > 0 ? `${Number(match[1])}:${Number(match[2])}` : null;
}
