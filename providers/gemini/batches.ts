/**
 * The Gemini API's Batch Mode, polled only (a batch made with models/*:batchGenerateContent is registered by its
 * name): GET /batches/{name} answers the batch as a long-running operation, {name: "batches/...", metadata:
 * {state, batchStats, output}, done, response: {responsesFile | inlinedResponses}} (a bare batch object, state
 * and output at its top, is read too); POST /batches/{name}:cancel. A file of results is a File API file
 * (`files/...`), downloaded from /download/<version>/files/{name}:download?alt=media as JSONL, each line
 * {key, response: GenerateContentResponse} or {key, error}. Inlined responses are no file: they are read from the
 * batch itself ({response | output}.inlinedResponses.inlinedResponses[], each {response, metadata} or {error}).
 *
 * States come as BATCH_STATE_* or JOB_STATE_*; the suffix decides (see STATES).
 */
import type { BatchesTranslator, BatchStatus, ProviderTarget } from '../../core/dispatch/provider.ts';
import { malformedAnswer, withoutContentType } from '../shared/files.ts';
import { geminiApiHeaders } from './chat.ts';
import { usageFrom, type GenerateContentResponse } from './response.ts';

/** Pending and queued batches have not started; paused and cancelling ones are still running for the gateway. */
const STATES: Record<string, BatchStatus> = {
  PENDING: 'validating', QUEUED: 'validating',
  RUNNING: 'in_progress', UPDATING: 'in_progress', PAUSED: 'in_progress', CANCELLING: 'in_progress',
  SUCCEEDED: 'completed', PARTIALLY_SUCCEEDED: 'completed',
  FAILED: 'failed', CANCELLED: 'cancelled', EXPIRED: 'expired',
};

/** int64 fields arrive as JSON strings. */
const count = (value: unknown) => {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : 0;
};
const headers = (target: ProviderTarget) => withoutContentType(geminiApiHeaders(target));
/** `batches/abc` or `abc` -> `abc`, one escaped path segment. */
const segment = (name: string, collection: string) => encodeURIComponent(name.startsWith(`${collection}/`) ? name.slice(collection.length + 1) : name);

interface GeminiOutput { responsesFile?: unknown; inlinedResponses?: unknown }

interface GeminiBatch {
  name?: unknown;
  state?: unknown;
  batchStats?: { requestCount?: unknown; successfulRequestCount?: unknown; failedRequestCount?: unknown };
  output?: GeminiOutput;
}

type GeminiOperation = GeminiBatch & { metadata?: GeminiBatch; response?: GeminiOutput };

const batchOf = (op: GeminiOperation | null): GeminiBatch => (op?.metadata && typeof op.metadata === 'object' ? op.metadata : (op ?? {}));

/** The inlined responses of an operation or a bare batch: a list, or a message holding the list (as the API nests it). */
function inlined(op: GeminiOperation | null): unknown[] | null {
  const output = op?.response ?? batchOf(op).output;
  const held = output?.inlinedResponses as { inlinedResponses?: unknown } | unknown[] | undefined;
  if (Array.isArray(held)) return held;
  if (held && Array.isArray(held.inlinedResponses)) return held.inlinedResponses;
  return null;
}

/** The download endpoint sits beside the API's version path: https://host/download/v1beta/files/x:download. */
function downloadUrl(target: ProviderTarget, fileName: string): string {
  const base = new URL(target.baseUrl);
  return `${base.origin}/download${base.pathname.replace(/\/+$/, '')}/files/${segment(fileName, 'files')}:download?alt=media`;
}

export const geminiBatches: BatchesTranslator = {
  endpoints: ['/v1/chat/completions'],
  status: (name, target) => ({ method: 'GET', path: `/batches/${segment(name, 'batches')}`, headers: headers(target) }),
  cancel: (name, target) => ({ method: 'POST', path: `/batches/${segment(name, 'batches')}:cancel`, headers: headers(target) }),
  fromBatch(body, target) {
    const op = body as GeminiOperation | null;
    const batch = batchOf(op);
    const name = typeof op?.name === 'string' ? op.name : batch.name;
    const state = typeof batch.state === 'string' ? STATES[batch.state.replace(/^(JOB|BATCH)_STATE_/, '')] : undefined;
    if (typeof name !== 'string' || !name.startsWith('batches/') || !state) throw malformedAnswer(target, 'batch (no batches/ name or an unknown state)');
    const stats = batch.batchStats ?? {};
    const file = op?.response?.responsesFile ?? batch.output?.responsesFile;
    return {
      id: name, status: state,
      counts: { total: count(stats.requestCount), completed: count(stats.successfulRequestCount), failed: count(stats.failedRequestCount) },
      outputFileId: typeof file === 'string' && file.startsWith('files/') ? file : null, errorFileId: null,
      ...(inlined(op) ? { inlineResults: true } : {}),
    };
  },
  // Always the download endpoint of the provider's own base URL, for the file the batch names; inlined results
  // come with the batch itself.
  results(batch, target) {
    if (batch.outputFileId !== null) return { method: 'GET', path: downloadUrl(target, batch.outputFileId), headers: headers(target) };
    return batch.inlineResults ? geminiBatches.status(batch.id, target) : null;
  },
  inlineResultLines: (body) => inlined(body as GeminiOperation | null) ?? [],
  fileInfo: (name, target) => ({ method: 'GET', path: `/files/${segment(name, 'files')}`, headers: headers(target) }),
  fromFileInfo(body, target) {
    const file = body as { name?: unknown; sizeBytes?: unknown; displayName?: unknown } | null;
    if (!file || typeof file.name !== 'string') throw malformedAnswer(target, 'file (no name)');
    const name = typeof file.displayName === 'string' && file.displayName !== '' ? file.displayName : `${file.name.slice('files/'.length)}.jsonl`;
    return { bytes: count(file.sizeBytes), filename: name };
  },
  resultLine(line) {
    const l = line as { response?: GenerateContentResponse | null; error?: unknown } | null;
    const response = l?.response ?? null;
    return {
      ok: !!response && !l?.error,
      model: typeof response?.modelVersion === 'string' ? response.modelVersion : null,
      usage: usageFrom(response?.usageMetadata) ?? null,
    };
  },
};
