/**
 * What the media translators (speech, transcription, image, video) share: a prediction created with the model's
 * input, a finished prediction's output read as file URLs, and progress read from the prediction's logs.
 */
import type { ProviderTarget, UpstreamRequest } from '../../core/dispatch/provider.ts';
import { asPrediction, bearer, creation, ended, malformed, type Prediction } from './predictions.ts';
import type { ReplicateOptions } from './input.ts';
import { extraInput } from './models.ts';

/**
 * POST the prediction. `wait`: Replicate holds the request until the output is ready (up to waitSeconds), for
 * models that answer in seconds; without it the answer comes at once and is polled, so progress is seen.
 */
export function mediaPrediction(target: ProviderTarget, input: Record<string, unknown>, wait: boolean): UpstreamRequest {
  const { path, version } = creation(target.upstreamModel, target);
  const headers: Record<string, string> = { ...target.headers, 'content-type': 'application/json', accept: 'application/json', ...bearer(target) };
  if (wait) headers.prefer = `wait=${(target.options as ReplicateOptions).waitSeconds ?? 60}`;
  const body = { ...(version ? { version } : {}), input: { ...extraInput(target), ...input } };
  return { method: 'POST', path, headers, body: JSON.stringify(body) };
}

/** A prediction that must have succeeded (a failed or canceled one throws with its error). */
export function succeeded(body: unknown, target: ProviderTarget): Prediction {
  const p = asPrediction(body, target);
  if (p.status !== 'succeeded') ended(p, target);
  return p;
}

const isHttpUrl = (value: unknown): value is string => typeof value === 'string' && /^https?:\/\//i.test(value);

/** The output's file URLs: one URL, or a list of them. */
export function outputUrls(p: Prediction, target: ProviderTarget): string[] {
  const urls = Array.isArray(p.output) ? p.output : [p.output];
  if (urls.length === 0 || !urls.every(isHttpUrl)) throw malformed(target, 'prediction output (not file URLs)');
  return urls;
}

/** Progress bars (tqdm) print ` 50%|#####     | 2/4`: the last one printed is where the model is. */
const BAR = /(\d{1,3})%\|/g;

/** The last percentage in a prediction's logs (0 to 100), or undefined when its logs show no progress bar. */
export function logProgress(body: unknown): number | undefined {
  const logs = (body as { logs?: unknown } | null)?.logs;
  if (typeof logs !== 'string') return undefined;
  let last: number | undefined;
  for (const match of logs.matchAll(BAR)) last = Number(match[1]);
  return last === undefined ? undefined : Math.min(last, 100);
}
