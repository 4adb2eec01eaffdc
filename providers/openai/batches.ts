/**
 * OpenAI's Batch API: the lines go up as a JSONL file (purpose `batch`), then POST /batches with input_file_id,
 * endpoint and completion_window 24h; GET /batches/{id}; POST /batches/{id}/cancel. Results are files: the
 * output and error JSONL come from GET /files/{id}/content, each line {custom_id, response: {status_code, body},
 * error}. Azure OpenAI serves the same API under its resource, with an api-version and its own key header
 * (providers/azure-openai/batches.ts).
 */
import type { Usage } from '../../core/canonical/chat.ts';
import type { BatchesTranslator, BatchStatus, ProviderTarget } from '../../core/dispatch/provider.ts';
import { malformedAnswer, withoutContentType } from '../shared/files.ts';
import { openaiHeaders } from './chat.ts';

/** finalizing and cancelling are still running for the gateway: only their end is a state of its own. */
const STATUSES: Record<string, BatchStatus> = {
  validating: 'validating', in_progress: 'in_progress', finalizing: 'in_progress', cancelling: 'in_progress',
  completed: 'completed', failed: 'failed', expired: 'expired', cancelled: 'cancelled',
};

const count = (value: unknown) => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0);
const id = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);
const plainPath = (_target: ProviderTarget, ...parts: string[]) => `/${parts.map(encodeURIComponent).join('/')}`;

function openaiUsage(value: unknown): Usage | null {
  const u = value as { prompt_tokens?: unknown; completion_tokens?: unknown; total_tokens?: unknown } | null;
  if (!u || typeof u !== 'object') return null;
  const prompt = count(u.prompt_tokens);
  const completion = count(u.completion_tokens);
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: count(u.total_tokens) || prompt + completion };
  const details = (value as { prompt_tokens_details?: { cached_tokens?: unknown } }).prompt_tokens_details;
  if (details && typeof details.cached_tokens === 'number') usage.prompt_tokens_details = { cached_tokens: count(details.cached_tokens) };
  return usage;
}

export interface OpenAiBatchesHooks {
  /** The path of a resource from its segments (each escaped), query included. */
  path(target: ProviderTarget, ...parts: string[]): string;
  headers(target: ProviderTarget): Record<string, string>;
}

/** The polling half: status, cancel, the batch object, its result files and lines. */
export function createOpenAiBatches(hooks: OpenAiBatchesHooks): BatchesTranslator {
  const { path } = hooks;
  const headers = (target: ProviderTarget) => withoutContentType(hooks.headers(target));
  return {
    endpoints: ['/v1/chat/completions', '/v1/embeddings', '/v1/completions'],
    status: (batchId, target) => ({ method: 'GET', path: path(target, 'batches', batchId), headers: headers(target) }),
    cancel: (batchId, target) => ({ method: 'POST', path: path(target, 'batches', batchId, 'cancel'), headers: headers(target) }),
    fromBatch(body, target: ProviderTarget) {
      const b = body as { id?: unknown; status?: unknown; request_counts?: Record<string, unknown>; output_file_id?: unknown; error_file_id?: unknown } | null;
      const status = typeof b?.status === 'string' ? STATUSES[b.status] : undefined;
      if (!b || id(b.id) === null || !status) throw malformedAnswer(target, 'batch (no id or an unknown status)');
      const counts = b.request_counts ?? {};
      return {
        id: b.id as string, status,
        counts: { total: count(counts.total), completed: count(counts.completed), failed: count(counts.failed) },
        outputFileId: id(b.output_file_id), errorFileId: id(b.error_file_id),
      };
    },
    results: (batch, target) => (batch.outputFileId === null ? null : {
      method: 'GET', path: path(target, 'files', batch.outputFileId, 'content'), headers: headers(target),
    }),
    fileInfo: (fileId, target) => ({ method: 'GET', path: path(target, 'files', fileId), headers: headers(target) }),
    fromFileInfo(body, target) {
      const file = body as { bytes?: unknown; filename?: unknown } | null;
      if (!file || typeof file.bytes !== 'number') throw malformedAnswer(target, 'file (no bytes)');
      return { bytes: count(file.bytes), filename: typeof file.filename === 'string' && file.filename !== '' ? file.filename : 'batch-results.jsonl' };
    },
    resultLine(line) {
      const l = line as { response?: { status_code?: unknown; body?: { model?: unknown; usage?: unknown } } | null; error?: unknown } | null;
      const response = l?.response;
      const ok = !!response && typeof response.status_code === 'number' && response.status_code < 300 && !l?.error;
      return { ok, model: typeof response?.body?.model === 'string' ? response.body.model : null, usage: openaiUsage(response?.body?.usage) };
    },
  };
}

export const openaiBatches: BatchesTranslator = {
  ...createOpenAiBatches({ path: plainPath, headers: openaiHeaders }),
  submit(endpoint, lines, target) {
    return {
      kind: 'file',
      filename: 'batch-input.jsonl',
      jsonl: lines.map((line) => JSON.stringify(line)).join('\n') + '\n',
      create: (inputFileId) => ({
        method: 'POST', path: '/batches', headers: openaiHeaders(target),
        body: JSON.stringify({ input_file_id: inputFileId, endpoint, completion_window: '24h' }),
      }),
    };
  },
};
