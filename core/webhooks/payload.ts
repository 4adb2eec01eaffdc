/**
 * The batch completion webhook's body (spec: Events / Batch completion webhook). Every terminal state sends
 * the one event type the spec shows, `batch.completed`; `status` says which state it was (completed, failed,
 * cancelled, expired), and the payload has the same fields for all of them.
 */
export const BATCH_COMPLETED = 'batch.completed';

export type TerminalBatchStatus = 'completed' | 'failed' | 'cancelled' | 'expired';

/** What the payload is built from: the batch record at its terminal state. */
export interface TerminalBatch {
  id: string;
  provider: string;
  endpoint: string;
  status: TerminalBatchStatus;
  requestCounts: { total: number; completed: number; failed: number };
  providerBatchId: string;
  /** The provider's ids of the output and error files, when the batch has them. */
  outputProviderFileId: string | null;
  errorProviderFileId: string | null;
  /** When the gateway saw the terminal state, ms since epoch. */
  completedAt: number;
  metadata: Record<string, unknown> | null;
}

export interface BatchCompletedPayload {
  type: typeof BATCH_COMPLETED;
  batch_id: string;
  provider: string;
  endpoint: string;
  status: TerminalBatchStatus;
  request_counts: { total: number; completed: number; failed: number };
  provider_batch_id: string;
  output_file_url: string | null;
  error_file_url: string | null;
  completed_at: string;
  metadata: Record<string, unknown> | null;
}

/** The spec's gateway-relative form; the gateway does not serve raw content at it. */
const fileUrl = (providerFileId: string | null) =>
  providerFileId === null ? null : `/v1/files/${encodeURIComponent(providerFileId)}/content`;

export function batchCompletedPayload(batch: TerminalBatch): BatchCompletedPayload {
  const { total, completed, failed } = batch.requestCounts;
  return {
    type: BATCH_COMPLETED,
    batch_id: batch.id,
    provider: batch.provider,
    endpoint: batch.endpoint,
    status: batch.status,
    request_counts: { total, completed, failed },
    provider_batch_id: batch.providerBatchId,
    output_file_url: fileUrl(batch.outputProviderFileId),
    error_file_url: fileUrl(batch.errorProviderFileId),
    completed_at: new Date(batch.completedAt).toISOString(),
    metadata: batch.metadata,
  };
}
