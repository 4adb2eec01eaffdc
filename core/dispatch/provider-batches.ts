/**
 * The batches part of the provider contract: how a provider's batch API takes a gateway batch, reports its
 * status, is cancelled, and hands back its results. Translators build requests and read answers only; the core
 * (core/dispatch/batches-call.ts) does the I/O, uploads input files through the files translator, and streams
 * result lines without holding them whole.
 */
import type { Usage } from '../canonical/chat.ts';
import type { ProviderTarget, UpstreamRequest } from './provider.ts';

/** The endpoints a gateway batch may target (spec: Batches). */
export const BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/messages', '/v1/embeddings', '/v1/completions'] as const;
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];

/** The spec's batch statuses; the last four are terminal. */
export type BatchStatus = 'validating' | 'in_progress' | 'completed' | 'failed' | 'cancelled' | 'expired';
export const TERMINAL_BATCH_STATUSES: readonly BatchStatus[] = ['completed', 'failed', 'cancelled', 'expired'];

/** One request of a batch, as the caller sent it (file ids already translated to the provider's). */
export interface BatchLine {
  custom_id: string;
  method: 'POST';
  url: string;
  body: Record<string, unknown>;
}

export interface BatchCounts { total: number; completed: number; failed: number }

/** The provider's batch, read from its answer to a submit, a status request or a cancel. */
export interface ProviderBatch {
  id: string;
  /** Mapped to the spec's statuses by the translator. */
  status: BatchStatus;
  counts: BatchCounts;
  /** The provider's ids of the output and error files, for providers whose results are files. */
  outputFileId: string | null;
  errorFileId: string | null;
  /** The upstream model the whole batch runs on, when the provider's batch names one (Bedrock's modelId, Vertex's model). */
  model?: string | null;
  /**
   * Every provider file holding result lines, when they are more than the output file (Bedrock writes one output
   * object per input object). Set by `locateResults`; `results` reads them.
   */
  resultFileIds?: string[];
  /** Sizes and names of result files already known from a listing, so no `fileInfo` request is needed. */
  fileInfo?: Record<string, { bytes: number; filename: string }>;
  /**
   * The results travel inside the provider's batch itself (Gemini's inlined responses), not in a file: `results`
   * asks for the batch again and `inlineResultLines` takes the lines from that one JSON answer.
   */
  inlineResults?: boolean;
}

/** What `locateResults` may send: authorized, inside the upstream's breaker; an error answer throws, but 404 is null. */
export interface BatchStorageIO {
  text(request: UpstreamRequest): Promise<string | null>;
}

/**
 * How a batch is submitted:
 * - `file`: the lines go up as a JSONL file through the provider's files translator (purpose `batch`), then
 *   `create(inputFileId)` is sent.
 * - `direct`: one request carries the lines.
 */
export type BatchSubmitPlan =
  | { kind: 'file'; filename: string; jsonl: string; create(inputFileId: string): UpstreamRequest }
  | { kind: 'direct'; request: UpstreamRequest };

/** What one result line says, for settlement. */
export interface BatchResultLine {
  ok: boolean;
  /** The model the provider answered with, when the line names one. */
  model: string | null;
  usage: Usage | null;
}

export interface BatchesTranslator {
  /** The gateway endpoints this provider's batch API takes; another is 400 CAPABILITY_NOT_SUPPORTED. */
  endpoints: readonly BatchEndpoint[];
  /** Absent for a provider whose batches the gateway polls only (capability `batch: {submit: false}`). */
  submit?(endpoint: BatchEndpoint, lines: readonly BatchLine[], target: ProviderTarget): BatchSubmitPlan;
  status(providerBatchId: string, target: ProviderTarget): UpstreamRequest;
  /** Its answer is not read: some providers answer a cancel with an empty object. */
  cancel(providerBatchId: string, target: ProviderTarget): UpstreamRequest;
  /** A submit or status answer (JSON) -> the provider's batch. Throws when it names none. */
  fromBatch(body: unknown, target: ProviderTarget): ProviderBatch;
  /**
   * For providers whose status names only where results were written (Bedrock's S3 prefix, Vertex's GCS
   * directory): run once at the terminal state, before the result files are registered, to complete the batch
   * from that storage: the output and error files, `resultFileIds`, `fileInfo`, and final counts where the status
   * has none. Its answer travels in the settlement job's payload, so it is plain JSON.
   */
  locateResults?(batch: ProviderBatch, target: ProviderTarget, io: BatchStorageIO): Promise<ProviderBatch>;
  /**
   * GET of a finished batch's results as JSONL: its output file, the provider's results endpoint, or one request
   * per result file (read in order).
   */
  results(batch: ProviderBatch, target: ProviderTarget): UpstreamRequest | readonly UpstreamRequest[] | null;
  /** GET of a result file's metadata, for registering it as a gateway file; absent when results are no file. */
  fileInfo?(providerFileId: string, target: ProviderTarget): UpstreamRequest;
  fromFileInfo?(body: unknown, target: ProviderTarget): { bytes: number; filename: string };
  /** The result lines inside a batch answer, for a batch with `inlineResults`; each is read by `resultLine`. */
  inlineResultLines?(body: unknown): unknown[];
  /** One JSONL result line (parsed) -> whether it succeeded and the usage it reports. */
  resultLine(line: unknown): BatchResultLine;
}
