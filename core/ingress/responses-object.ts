/**
 * The Response object callers see, from a stored record (or from one being streamed): the spec's Stored response
 * fields, plus the fields of OpenAI's Response object that its official client reads (`error`,
 * `incomplete_details`, `instructions`, `output_text` is derived by the client itself from `output`).
 */
import type { ResponseRecord } from '../store/responses.ts';

const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));

/** A record without what only the gateway reads (who made it and with which input). */
export type ResponseView = Omit<ResponseRecord, 'tenantId' | 'input' | 'callerKind' | 'apiKeyId' | 'userId'>;

export function responseObject(record: ResponseView) {
  return {
    id: record.id,
    object: 'response' as const,
    provider: record.provider,
    provider_response_id: record.providerResponseId,
    model: record.model ?? record.requestedModel,
    previous_response_id: record.previousResponseId,
    status: record.status,
    instructions: record.instructions,
    output: record.output,
    usage: record.usage,
    error: record.error,
    // A stored status says no more than this: a length cut is the one incomplete end the gateway records.
    incomplete_details: record.status === 'incomplete' ? { reason: 'max_output_tokens' as const } : null,
    metadata: record.metadata,
    created_at: seconds(record.createdAt),
    completed_at: seconds(record.completedAt),
  };
}
