/**
 * Anthropic's Message Batches API: POST /messages/batches with `requests` [{custom_id, params}] (params is a
 * Messages request), GET /messages/batches/{id}, POST /messages/batches/{id}/cancel, and the results as JSONL
 * from GET /messages/batches/{id}/results, each line {custom_id, result: {type, message | error}}. Results are
 * not a file: a finished batch has no output or error file id.
 *
 * Anthropic has one running state (`in_progress`, then `canceling`) and one end (`ended`); which of the spec's
 * terminal states an ended batch is in follows from its counts: cancelled when a cancel was initiated, completed
 * when any request succeeded, else expired when requests only expired, else failed.
 */
import type { BatchesTranslator, BatchStatus, ProviderBatch, ProviderTarget } from '../../core/dispatch/provider.ts';
import { malformedAnswer, withoutContentType } from '../shared/files.ts';
import { anthropicHeaders } from './chat.ts';
import { canonicalUsage } from './response.ts';

const count = (value: unknown) => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0);
const path = (batchId: string, ...rest: string[]) => ['/messages/batches', encodeURIComponent(batchId), ...rest].join('/');
const headers = (target: ProviderTarget) => anthropicHeaders(target, []);

interface AnthropicBatch {
  id?: unknown;
  processing_status?: unknown;
  cancel_initiated_at?: unknown;
  request_counts?: { processing?: unknown; succeeded?: unknown; errored?: unknown; canceled?: unknown; expired?: unknown };
}

function statusOf(batch: AnthropicBatch, succeeded: number, errored: number, expired: number): BatchStatus | undefined {
  if (batch.processing_status === 'in_progress' || batch.processing_status === 'canceling') return 'in_progress';
  if (batch.processing_status !== 'ended') return undefined;
  if (typeof batch.cancel_initiated_at === 'string') return 'cancelled';
  if (succeeded > 0) return 'completed';
  if (expired > 0 && errored === 0) return 'expired';
  return errored > 0 ? 'failed' : 'completed';
}

export const anthropicBatches: BatchesTranslator = {
  endpoints: ['/v1/messages'],
  submit(_endpoint, lines, target) {
    const requests = lines.map((line) => ({ custom_id: line.custom_id, params: line.body }));
    return { kind: 'direct', request: { method: 'POST', path: '/messages/batches', headers: headers(target), body: JSON.stringify({ requests }) } };
  },
  status: (batchId, target) => ({ method: 'GET', path: path(batchId), headers: withoutContentType(headers(target)) }),
  cancel: (batchId, target) => ({ method: 'POST', path: path(batchId, 'cancel'), headers: withoutContentType(headers(target)) }),
  fromBatch(body, target): ProviderBatch {
    const b = body as AnthropicBatch | null;
    const c = b?.request_counts ?? {};
    const [processing, succeeded, errored, canceled, expired] = [c.processing, c.succeeded, c.errored, c.canceled, c.expired].map(count) as [number, number, number, number, number];
    const status = b ? statusOf(b, succeeded, errored, expired) : undefined;
    if (!b || typeof b.id !== 'string' || b.id === '' || !status) throw malformedAnswer(target, 'message batch (no id or an unknown processing_status)');
    return {
      id: b.id, status,
      counts: { total: processing + succeeded + errored + canceled + expired, completed: succeeded, failed: errored + canceled + expired },
      outputFileId: null, errorFileId: null,
    };
  },
  // The documented results endpoint of the batch, on the provider's own base URL: never a URL from an answer.
  results: (batch, target) => ({ method: 'GET', path: path(batch.id, 'results'), headers: withoutContentType(headers(target)) }),
  resultLine(line) {
    const result = (line as { result?: { type?: unknown; message?: { model?: unknown; usage?: unknown } } } | null)?.result;
    const message = result?.type === 'succeeded' ? result.message : undefined;
    const usage = message?.usage && typeof message.usage === 'object' ? canonicalUsage(message.usage as Parameters<typeof canonicalUsage>[0]) : null;
    return { ok: result?.type === 'succeeded', model: typeof message?.model === 'string' ? message.model : null, usage };
  },
};
