/**
 * fal's queue API, which every fal model is called through (docs.fal.ai, "Queue"):
 * 1. POST {base}/{model_id} with the model's input JSON -> `{request_id, status_url, response_url, cancel_url}`
 *    (newer answers also carry `status: IN_QUEUE` and `queue_position`);
 * 2. GET status_url?logs=1 -> `{status: IN_QUEUE (queue_position) | IN_PROGRESS (logs) | COMPLETED, ...}`;
 * 3. GET response_url once COMPLETED -> the model's output JSON. A request that failed is COMPLETED too: its
 *    response URL answers the error (4xx/5xx `{detail}`), which the exchange maps through mapError.
 * A model id with a sub-path (fal-ai/flux/dev) is submitted under the whole path, but its status and response live
 * under the app (fal-ai/flux/requests/{id}): the URLs fal answers are followed rather than rebuilt. They carry the
 * credential only to fal's hosts or the configured base URL's origin.
 */
import type { FollowUp, ProviderTarget, UpstreamRequest } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { isRecord } from '../shared/transcripts.ts';

/** The interval fal's own JavaScript client polls at. */
export const DEFAULT_POLL_INTERVAL_MS = 500;

export interface FalOptions {
  pollIntervalMs?: number;
  /** Extra input fields sent with every request (the model's own knobs); the translated fields win. */
  input?: Record<string, unknown>;
  speechTextField?: 'prompt' | 'text' | 'input';
  speechFormat?: 'mp3' | 'opus' | 'aac' | 'flac' | 'wav' | 'pcm';
  imageFormat?: 'png' | 'jpeg';
  maxImages?: number;
  durationSuffix?: string;
}

export type QueueStatus = 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED';
const STATUSES = new Set<unknown>(['IN_QUEUE', 'IN_PROGRESS', 'COMPLETED']);

export interface QueueAnswer {
  /** Absent in an older submit answer: the request was just queued. */
  status?: QueueStatus;
  requestId: string;
  statusUrl: string;
  responseUrl: string;
  queuePosition?: number;
  logs: string[];
  /** A COMPLETED status of a request that failed names why (error, error_type). */
  error?: string;
}

export const malformed = (target: ProviderTarget, what: string) =>
  new GatewayError('UPSTREAM_ERROR', `${target.slug} returned ${what}`, { provider: target.slug });

export const options = (target: ProviderTarget): FalOptions => target.options as FalOptions;

/** fal's credential scheme (`Authorization: Key <key>`), and the operator's extra headers. */
export function falHeaders(target: ProviderTarget): Record<string, string> {
  return { ...target.headers, accept: 'application/json', ...(target.apiKey ? { authorization: `Key ${target.apiKey}` } : {}) };
}

/** namespace/name[/sub/path], each segment kept as a path segment. */
export function modelPath(target: ProviderTarget): string {
  const segments = target.upstreamModel.split('/');
  if (segments.length < 2 || segments.some((s) => s === '' || s === '.' || s === '..')) {
    throw new GatewayError('UPSTREAM_BAD_REQUEST', `${target.slug}: upstream model "${target.upstreamModel}" is not a fal model id (namespace/name, e.g. fal-ai/flux/dev)`, { provider: target.slug });
  }
  return segments.map(encodeURIComponent).join('/');
}

export function submit(target: ProviderTarget, input: Record<string, unknown>): UpstreamRequest {
  const body = { ...(options(target).input ?? {}), ...input };
  return { method: 'POST', path: `/${modelPath(target)}`, headers: { ...falHeaders(target), 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** The queue's answer (submit or status), or null when the body is something else: the model's output. */
export function queueAnswer(body: unknown): QueueAnswer | null {
  if (!isRecord(body) || typeof body.request_id !== 'string' || typeof body.response_url !== 'string') return null;
  if (body.status !== undefined && !STATUSES.has(body.status)) return null;
  const logs = Array.isArray(body.logs) ? body.logs.map((l) => (isRecord(l) ? l.message : l)).filter((m): m is string => typeof m === 'string') : [];
  const error = text(body.error) ?? text(body.error_type);
  return {
    ...(body.status !== undefined ? { status: body.status as QueueStatus } : {}),
    requestId: body.request_id,
    responseUrl: body.response_url,
    statusUrl: text(body.status_url) ?? `${body.response_url}/status`,
    ...(typeof body.queue_position === 'number' ? { queuePosition: body.queue_position } : {}),
    logs,
    ...(error ? { error } : {}),
  };
}

/** An absolute URL fal answered, checked to be fal's (or the configured base URL's) before the credential goes there. */
export function falUrl(url: string, target: ProviderTarget, what: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw malformed(target, `a ${what} that is not a URL`);
  }
  const host = parsed.hostname;
  const falHost = parsed.protocol === 'https:' && (host === 'fal.run' || host.endsWith('.fal.run'));
  if (!falHost && parsed.origin !== new URL(target.baseUrl).origin) {
    throw new GatewayError('UPSTREAM_ERROR', `${target.slug}: the ${what} is on ${parsed.origin}, which is not fal's; the gateway's credential is not sent there`, { provider: target.slug });
  }
  return parsed;
}

/** A result file (audio, image, video) on fal's CDN: any http(s) URL, fetched without the credential. */
export function fileUrl(value: unknown, target: ProviderTarget, what: string): string {
  const url = isRecord(value) ? value.url : undefined;
  if (typeof url !== 'string' || !/^(https?:\/\/|data:)/i.test(url)) throw malformed(target, `an output without a ${what} URL`);
  return url;
}

/** The request failed: said with fal's reason as an answer to a poll (200), so it is not retried on fal. */
export function failed(target: ProviderTarget, answer: QueueAnswer): GatewayError {
  return new GatewayError('UPSTREAM_ERROR', `${target.slug}: request ${answer.requestId} failed: ${answer.error ?? 'no reason given'}`, {
    provider: target.slug, upstreamStatus: 200, upstreamError: { status: answer.status, error: answer.error },
  });
}

/** The status to poll (after the interval), or the output once COMPLETED. */
export function nextQueueRequest(answer: QueueAnswer, target: ProviderTarget): FollowUp {
  if (answer.status === 'COMPLETED') {
    if (answer.error) throw failed(target, answer);
    return { request: { method: 'GET', path: falUrl(answer.responseUrl, target, 'response URL').href, headers: falHeaders(target) } };
  }
  const status = falUrl(answer.statusUrl, target, 'status URL');
  // The logs carry a running model's progress (image progress reads them).
  status.searchParams.set('logs', '1');
  return { request: { method: 'GET', path: status.href, headers: falHeaders(target) }, delayMs: options(target).pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS };
}

/** A follow-up of a queue answer, or null when the body is the model's output. */
export function queueStep(body: unknown, target: ProviderTarget): FollowUp | null {
  const answer = queueAnswer(body);
  return answer ? nextQueueRequest(answer, target) : null;
}

/** The most recent percentage the model logged (tqdm bars, "Progress: 40%"), if any. */
export function loggedPercent(logs: string[]): number | undefined {
  for (let i = logs.length - 1; i >= 0; i--) {
    const match = /(\d{1,3}(?:\.\d+)?)\s*%/.exec(logs[i]!);
    if (match) return Math.min(100, Number(match[1]));
  }
  return undefined;
}

/** Progress of a queue answer: queued 0, running what the logs say (else half way), completed 100. */
export function queueProgress(answer: QueueAnswer): number {
  if (answer.status === 'COMPLETED') return 100;
  if (answer.status === 'IN_PROGRESS') return loggedPercent(answer.logs) ?? 50;
  return 0;
}
