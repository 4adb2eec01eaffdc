/**
 * A chat call is a prediction: created (holding the request open with `Prefer: wait`), polled at urls.get while
 * it is starting or processing, then read; a streaming call creates it with `stream: true` and follows
 * urls.stream. Prediction URLs come from Replicate's answers, so the credential goes only to Replicate's own
 * hosts (or the configured base URL's origin).
 */
import type { ChatCompletion, ChatCompletionRequest, Usage } from '../../core/canonical/chat.ts';
import type { FollowUp, ProviderTarget, UpstreamRequest } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { predictionInput, type ReplicateOptions } from './input.ts';

export interface Prediction {
  id?: string;
  status: 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled' | 'aborted';
  output?: unknown;
  error?: unknown;
  /** The model's printed output so far (progress bars among it). */
  logs?: unknown;
  created_at?: string;
  urls?: { get?: string; stream?: string; cancel?: string };
  metrics?: { input_token_count?: unknown; output_token_count?: unknown };
}

const STATUSES = new Set(['starting', 'processing', 'succeeded', 'failed', 'canceled', 'aborted']);
const VERSION_ID = /^[0-9a-f]{64}$/;

export const malformed = (target: ProviderTarget, what: string) =>
  new GatewayError('UPSTREAM_ERROR', `${target.slug} returned a malformed ${what}`, { provider: target.slug });

/** owner/name (an official model), owner/name:version or a bare version id, deployments/owner/name. */
export function creation(model: string, target: ProviderTarget): { path: string; version?: string } {
  const [name, version] = model.split(':', 2) as [string, string | undefined];
  if (version !== undefined || VERSION_ID.test(name)) return { path: '/predictions', version: version ?? name };
  const segments = name.split('/');
  const deployment = segments[0] === 'deployments' && segments.length === 3;
  if (segments.length === 2 || deployment) {
    const [owner, modelName] = deployment ? segments.slice(1) : segments;
    return { path: `/${deployment ? 'deployments' : 'models'}/${encodeURIComponent(owner!)}/${encodeURIComponent(modelName!)}/predictions` };
  }
  throw new GatewayError('UPSTREAM_BAD_REQUEST', `${target.slug}: upstream model "${model}" is not owner/name, owner/name:version, a version id or deployments/owner/name`, { provider: target.slug });
}

export const bearer = (target: ProviderTarget): Record<string, string> => (target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {});

export function createPrediction(request: ChatCompletionRequest, target: ProviderTarget, stream: boolean): UpstreamRequest {
  const format = request.response_format?.type;
  if (format === 'json_object' || format === 'json_schema') {
    throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${target.slug} does not support response_format ${format}`, { provider: target.slug, capability: 'response_format' });
  }
  const { path, version } = creation(target.upstreamModel, target);
  const options = target.options as ReplicateOptions;
  const headers: Record<string, string> = { ...target.headers, 'content-type': 'application/json', ...bearer(target) };
  // A stream is wanted at once; otherwise Replicate holds the request until the output is ready (up to 60 s).
  if (!stream) headers.prefer = `wait=${options.waitSeconds ?? 60}`;
  const body = { ...(version ? { version } : {}), input: predictionInput(request, target), ...(stream ? { stream: true } : {}) };
  return { method: 'POST', path, headers, body: JSON.stringify(body) };
}

export function asPrediction(body: unknown, target: ProviderTarget): Prediction {
  const p = body as Prediction | null;
  if (!p || typeof p !== 'object' || typeof p.status !== 'string' || !STATUSES.has(p.status)) throw malformed(target, 'prediction');
  return p;
}

function followed(url: string | undefined, target: ProviderTarget, what: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url ?? '');
  } catch {
    throw malformed(target, `prediction (no ${what} URL)`);
  }
  const host = parsed.hostname;
  const replicateHost = parsed.protocol === 'https:' && (host === 'replicate.com' || host.endsWith('.replicate.com'));
  if (!replicateHost && parsed.origin !== new URL(target.baseUrl).origin) {
    throw new GatewayError('UPSTREAM_ERROR', `${target.slug}: the prediction's ${what} URL is on ${parsed.origin}, which is not Replicate's; the gateway's credential is not sent there`, { provider: target.slug });
  }
  return parsed.href;
}

export function ended(p: Prediction, target: ProviderTarget): never {
  const details = { provider: target.slug, upstreamError: { id: p.id, status: p.status, error: p.error ?? null } };
  if (p.status === 'failed') {
    const reason = typeof p.error === 'string' && p.error !== '' ? p.error : JSON.stringify(p.error ?? 'no error given');
    throw new GatewayError('UPSTREAM_ERROR', `${target.slug}: prediction ${p.id ?? ''} failed: ${reason}`, details);
  }
  throw new GatewayError('UPSTREAM_ERROR', `${target.slug}: prediction ${p.id ?? ''} was ${p.status} before it finished`, details);
}

export function nextStep(body: unknown, target: ProviderTarget, stream: boolean, step: number): FollowUp | null {
  const p = asPrediction(body, target);
  if (p.status === 'failed' || p.status === 'canceled' || p.status === 'aborted') ended(p, target);
  if (stream) {
    const path = followed(p.urls?.stream, target, 'stream');
    return { request: { method: 'GET', path, headers: { accept: 'text/event-stream', 'cache-control': 'no-store', ...bearer(target) } }, stream: true };
  }
  if (p.status === 'succeeded') return null;
  return poll(p, target, step);
}

/** The next poll of an unfinished prediction at its urls.get, after a wait that grows 1.5 times a step. */
export function poll(p: Prediction, target: ProviderTarget, step: number): FollowUp {
  const options = target.options as ReplicateOptions;
  const first = options.pollIntervalMs ?? 500;
  const delayMs = Math.min(options.maxPollIntervalMs ?? 5000, Math.round(first * 1.5 ** step));
  return { request: { method: 'GET', path: followed(p.urls?.get, target, 'get'), headers: { accept: 'application/json', ...bearer(target) } }, delayMs };
}

function usageOf(p: Prediction): Usage | undefined {
  const input = p.metrics?.input_token_count;
  const output = p.metrics?.output_token_count;
  if (typeof input !== 'number' || typeof output !== 'number') return undefined;
  return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
}

export function predictionCompletion(body: unknown, target: ProviderTarget, request: ChatCompletionRequest): ChatCompletion {
  const p = asPrediction(body, target);
  if (p.status !== 'succeeded') ended(p, target);
  const output = p.output ?? '';
  let text: string;
  if (typeof output === 'string') text = output;
  else if (Array.isArray(output) && output.every((piece) => typeof piece === 'string')) text = output.join('');
  else throw malformed(target, 'prediction output (not text)');
  const usage = usageOf(p);
  // Predictions report no finish reason: output that used the whole token allowance was cut by it.
  const limit = request.max_completion_tokens ?? request.max_tokens;
  const cut = usage !== undefined && limit !== undefined && usage.completion_tokens >= limit;
  const createdAt = p.created_at ? Date.parse(p.created_at) : NaN;
  const completion: ChatCompletion = {
    id: p.id ?? `chatcmpl-${target.slug}`,
    object: 'chat.completion',
    created: Number.isNaN(createdAt) ? Math.floor(Date.now() / 1000) : Math.floor(createdAt / 1000),
    model: target.upstreamModel,
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: cut ? 'length' : 'stop' }],
  };
  if (usage) completion.usage = usage;
  return completion;
}
