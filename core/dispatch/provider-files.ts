/**
 * The files part of the provider contract: how a provider's files API takes an upload whose bytes stream through
 * the gateway, how its answer names the file, how a file is deleted, and (where the provider serves them) how its
 * bytes are read back. Translators build requests only; the core (core/dispatch/files-call.ts) frames and streams
 * the bytes and does the I/O.
 */
import type { ProviderTarget, UpstreamRequest } from './provider.ts';

export const FILE_PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data'] as const;
export type FilePurpose = (typeof FILE_PURPOSES)[number];

/** What is known of an upload before its bytes arrive. */
export interface FileUploadInfo {
  filename: string;
  mimeType: string;
  purpose: FilePurpose;
  /** Known for a JSON (base64) upload; unknown while a multipart upload streams. */
  bytes?: number;
}

/**
 * How the bytes travel:
 * - `multipart`: one multipart/form-data request; the core writes `fields` (in order) and then the file as the
 *   part named `fileField`, framing them as the bytes arrive. `request` carries no body and no content type.
 * - `resumable`: a start request (JSON metadata) whose answer's headers name where the bytes go; `bytes()` builds
 *   that second request (absolute path), whose body is the file itself and whose answer describes the file.
 */
export type FileUploadPlan =
  | { kind: 'multipart'; request: UpstreamRequest; fields: Array<[string, string]>; fileField: string }
  | { kind: 'resumable'; start: UpstreamRequest; bytes(startHeaders: Record<string, string | string[] | undefined>): UpstreamRequest }
  | PartsUploadPlan;

/** An answer as the parts protocol reads it: headers and the body's text (XML for S3, JSON or empty for GCS). */
export interface UploadAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One part, as the core cut it from the stream: known before its request is built. */
export interface UploadPart {
  /** 0-based. */
  index: number;
  /** Of the part's first byte in the file. */
  offset: number;
  bytes: number;
  /** The file ends with this part (an empty file is one empty last part). */
  last: boolean;
  /** The file's size: known on the last part only. */
  total: number | null;
}

/**
 * Storage services that take a stream of unknown length only in parts of a known size (S3 multipart uploads, GCS
 * resumable uploads in chunks): the core holds one part at a time (at most `partBytes`, plus the one before it
 * while it learns whether more follows), sends each with its length, and waits for its answer before reading on.
 * - `start` opens the upload; its answer is the session every later request is built from.
 * - `part` is sent once per part (with a content-length); an answer in `continueStatuses` (GCS's 308) goes on too.
 * - `complete`, when present, ends the upload after the last part (S3); otherwise the last part's answer does (GCS).
 * - `finish` reads the final answer as the provider's file (it replaces `fromUpload` for this kind).
 * - `abort`, when present, is sent best effort when the upload fails after `start`.
 */
export interface PartsUploadPlan {
  kind: 'parts';
  partBytes: number;
  start: UpstreamRequest;
  part(session: UploadAnswer, part: UploadPart): UpstreamRequest;
  continueStatuses?: readonly number[];
  complete?(session: UploadAnswer, parts: ReadonlyArray<UploadAnswer & { part: UploadPart }>): UpstreamRequest;
  finish(session: UploadAnswer, answer: UploadAnswer): UploadedFile;
  abort?(session: UploadAnswer): UpstreamRequest;
}

/** The provider's answer to an upload, read by the translator. */
export interface UploadedFile {
  /** The provider's own file id: what requests to that provider name. */
  id: string;
  /** The size the provider reports, when it does. */
  bytes?: number;
  /** When the provider deletes the file itself (ms since the epoch), or null / absent when it keeps it. */
  expiresAt?: number | null;
}

export interface FilesTranslator {
  upload(file: FileUploadInfo, target: ProviderTarget): FileUploadPlan;
  /** The final answer of a multipart or resumable upload (JSON) -> the provider's file. Throws when it names no file. */
  fromUpload(body: unknown, target: ProviderTarget): UploadedFile;
  /** Deletes the provider's file; a 404 answer counts as already deleted. */
  delete(providerFileId: string, target: ProviderTarget): UpstreamRequest;
  /**
   * The request whose 200 answer's body is the file's bytes (what vector-store ingestion reads). Absent when the
   * provider serves no file content: such files cannot be read back, and callers check before any I/O.
   */
  download?(providerFileId: string, target: ProviderTarget): UpstreamRequest;
}
