/**
 * Vertex AI batch prediction jobs, polled only (a job made with batchPredictionJobs.create is registered by its
 * resource name or its number): GET {base}/batchPredictionJobs/{id} answers the BatchPredictionJob {name, state,
 * model, completionStats, outputInfo}; POST {base}/batchPredictionJobs/{id}:cancel. The base URL already names
 * the project and location, so only the name's last segment is sent.
 *
 * Results written to Cloud Storage are found by listing outputInfo.gcsOutputDirectory (only the objects directly
 * in it: its incremental_predictions/ folder repeats lines of the final files): each `predictions*.jsonl` is a
 * result file, lines {request, response: GenerateContentResponse, status} for Gemini and {instance, predictions,
 * status} for the text embedding models; a non-empty status is a failed request. Gemini writes its failures as
 * such lines, not as a file of their own: an `errors*.jsonl` (which the API documents for models with prediction
 * schemata) becomes the error file when one is there. A job writing to BigQuery has no result files: its counts
 * are all the gateway reports.
 */
import type { Usage } from '../../core/canonical/chat.ts';
import type { BatchesTranslator, BatchStatus, ProviderBatch, ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { usageFrom, type GenerateContentResponse } from '../gemini/response.ts';
import { malformedAnswer, withoutContentType } from '../shared/files.ts';
import { headers, resolved } from './chat.ts';
import { gsUri, int64, listUrl, objectOf, objectUrl, readListPage, type GcsObject } from './storage.ts';

/** Queued and pending jobs have not started; paused, updating and cancelling ones still run for the gateway. */
const STATES: Record<string, BatchStatus> = {
  JOB_STATE_QUEUED: 'validating', JOB_STATE_PENDING: 'validating',
  JOB_STATE_RUNNING: 'in_progress', JOB_STATE_CANCELLING: 'in_progress', JOB_STATE_UPDATING: 'in_progress', JOB_STATE_PAUSED: 'in_progress',
  JOB_STATE_SUCCEEDED: 'completed', JOB_STATE_PARTIALLY_SUCCEEDED: 'completed',
  JOB_STATE_FAILED: 'failed', JOB_STATE_CANCELLED: 'cancelled', JOB_STATE_EXPIRED: 'expired',
};

/** The batch as the poll saw it, with where the job wrote its results (read by locateResults). */
export interface VertexBatch extends ProviderBatch {
  outputDirectory?: string | null;
}

interface BatchPredictionJob {
  name?: unknown;
  state?: unknown;
  model?: unknown;
  completionStats?: { successfulCount?: unknown; failedCount?: unknown; incompleteCount?: unknown } | null;
  outputInfo?: { gcsOutputDirectory?: unknown } | null;
}

const jobHeaders = (target: ProviderTarget) => withoutContentType(headers(target));
/**
 * `projects/p/locations/l/batchPredictionJobs/123` or `123` -> `/batchPredictionJobs/123`, one escaped segment. A
 * name ending in a slash is sent whole (and found by no one) rather than as the collection, which lists jobs.
 */
function jobPath(id: string): string {
  const last = id.slice(id.lastIndexOf('/') + 1);
  return `/batchPredictionJobs/${encodeURIComponent(last === '' ? id : last)}`;
}

/**
 * `publishers/google/models/gemini-2.0-flash-001` -> gemini-2.0-flash-001; a tuned model's resource name stays
 * whole. Partner models (Claude, Llama) write results in other shapes, whose usage the gateway would not read:
 * their jobs are refused rather than settled as free.
 */
function jobModel(model: unknown, target: ProviderTarget): string | null {
  if (typeof model !== 'string' || model === '') return null;
  const published = /(?:^|\/)publishers\/([^/]+)\/models\/([^/]+)$/.exec(model);
  if (!published) return model;
  if (published[1] !== 'google') {
    throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${target.slug} does not support batches of ${model} (the gateway reads the results of Google's own models only)`,
      { provider: target.slug, capability: 'batch', model });
  }
  return published[2]!;
}

/** `gs://bucket/dir/sub` -> the bucket and the listing prefix `dir/sub/`. */
function directoryOf(uri: string): { bucket: string; prefix: string } | null {
  const match = /^gs:\/\/([^/]+)\/?(.*)$/.exec(uri);
  if (!match) return null;
  const path = match[2]!.replace(/\/+$/, '');
  return { bucket: match[1]!, prefix: path === '' ? '' : `${path}/` };
}

const baseName = (name: string) => name.slice(name.lastIndexOf('/') + 1);
const PREDICTIONS = /^predictions.*\.jsonl$/;
const ERRORS = /^errors.*\.jsonl$/;

/** Usage of an embeddings line: only when every prediction counted its tokens, as a partial sum would under-bill. */
function embeddingsUsage(predictions: unknown[]): Usage | null {
  const counts = predictions.map((p) => (p as { embeddings?: { statistics?: { token_count?: unknown } } } | null)?.embeddings?.statistics?.token_count);
  if (counts.length === 0 || !counts.every((c): c is number => typeof c === 'number' && Number.isSafeInteger(c) && c >= 0)) return null;
  const tokens = counts.reduce((sum, c) => sum + c, 0);
  return { prompt_tokens: tokens, completion_tokens: 0, total_tokens: tokens };
}

export const vertexBatches: BatchesTranslator = {
  // Batch prediction takes Gemini's generateContent requests and the text embedding models' instances.
  endpoints: ['/v1/chat/completions', '/v1/embeddings'],
  status: (id, target) => ({ method: 'GET', path: resolved(target, jobPath(id)), headers: jobHeaders(target) }),
  cancel: (id, target) => ({ method: 'POST', path: resolved(target, `${jobPath(id)}:cancel`), headers: headers(target), body: '{}' }),
  fromBatch(body, target): VertexBatch {
    const job = body as BatchPredictionJob | null;
    const state = typeof job?.state === 'string' && Object.hasOwn(STATES, job.state) ? STATES[job.state] : undefined;
    if (typeof job?.name !== 'string' || !/(?:^|\/)batchPredictionJobs\/[^/]+$/.test(job.name) || !state) {
      throw malformedAnswer(target, 'batch prediction job (no batchPredictionJobs/ name or an unknown state)');
    }
    const stats = job.completionStats ?? {};
    const [succeeded, failed, incomplete] = [stats.successfulCount, stats.failedCount, stats.incompleteCount].map((n) => int64(n) ?? 0) as [number, number, number];
    const directory = job.outputInfo?.gcsOutputDirectory;
    return {
      id: job.name, status: state,
      counts: { total: succeeded + failed + incomplete, completed: succeeded, failed },
      outputFileId: null, errorFileId: null,
      model: jobModel(job.model, target),
      outputDirectory: typeof directory === 'string' && directory.startsWith('gs://') ? directory : null,
    };
  },
  async locateResults(batch, target, io) {
    const uri = (batch as VertexBatch).outputDirectory;
    const directory = typeof uri === 'string' ? directoryOf(uri) : null;
    if (!directory) return { ...batch, resultFileIds: [] };
    const found: Array<GcsObject & { bytes: number }> = [];
    const tokens = new Set<string>();
    let token: string | undefined;
    do {
      const text = await io.text({ method: 'GET', path: listUrl(target, directory.bucket, directory.prefix, token), headers: jobHeaders(target) });
      // A bucket that is gone holds no results.
      if (text === null) break;
      const page = readListPage(text, directory.bucket, target);
      found.push(...page.objects);
      token = page.nextPageToken ?? undefined;
      if (token !== undefined && tokens.has(token)) throw malformedAnswer(target, 'object listing (a page token repeated)');
      if (token !== undefined) tokens.add(token);
    } while (token !== undefined);
    // Only the directory's own objects: delimiter=/ asks for them, and a deeper one is skipped whatever the answer.
    const own = found.filter((o) => o.name.startsWith(directory.prefix) && !o.name.slice(directory.prefix.length).includes('/'));
    const ofKind = (pattern: RegExp) => own.filter((o) => pattern.test(baseName(o.name))).sort((a, b) => a.name.localeCompare(b.name));
    const predictions = ofKind(PREDICTIONS);
    const errors = ofKind(ERRORS);
    const fileInfo: Record<string, { bytes: number; filename: string }> = {};
    for (const object of [...predictions, ...errors]) fileInfo[gsUri(object)] = { bytes: object.bytes, filename: baseName(object.name) };
    return {
      ...batch,
      outputFileId: predictions[0] ? gsUri(predictions[0]) : null,
      errorFileId: errors[0] ? gsUri(errors[0]) : null,
      resultFileIds: predictions.map(gsUri),
      fileInfo,
    };
  },
  results(batch, target) {
    const ids = batch.resultFileIds ?? (batch.outputFileId === null ? [] : [batch.outputFileId]);
    if (ids.length === 0) return null;
    return ids.map((id) => ({ method: 'GET' as const, path: `${objectUrl(target, objectOf(target, id))}?alt=media`, headers: jobHeaders(target) }));
  },
  resultLine(line) {
    const l = line as { status?: unknown; error?: unknown; response?: GenerateContentResponse | null; predictions?: unknown } | null;
    // The status is "" for a line that succeeded (a google.rpc.Status-like object or text otherwise).
    const failed = (l?.status !== undefined && l.status !== null && l.status !== '') || (l?.error !== undefined && l.error !== null);
    if (Array.isArray(l?.predictions)) return { ok: !failed && l.predictions.length > 0, model: null, usage: embeddingsUsage(l.predictions) };
    const response = l?.response && typeof l.response === 'object' ? l.response : null;
    return {
      ok: !failed && response !== null,
      model: typeof response?.modelVersion === 'string' ? response.modelVersion : null,
      usage: usageFrom(response?.usageMetadata) ?? null,
    };
  },
};
