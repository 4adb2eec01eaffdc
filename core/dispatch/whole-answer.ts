/**
 * An undici dispatch handler that collects a whole answer: the bytes arrive in an array instead of passing a
 * stream object, and the request's cancellation reaches undici through one subscription instead of an
 * AbortSignal listener (core/pipeline/abort.ts).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { onAbort, type CallSignal } from '../pipeline/abort.ts';
import { UpstreamTooLargeError } from './upstream-errors.ts';

export interface WholeResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** A success's whole body; an error answer's first bytes (up to the error cap). */
  body: Buffer;
}

export class WholeAnswer implements Dispatcher.DispatchHandler {
  private statusCode = 0;
  private headers: IncomingHttpHeaders = {};
  private readonly parts: Buffer[] = [];
  private size = 0;
  /** The most this answer's body may hold: maxBytes for a success, the error cap for an error. */
  private cap = 0;
  private settled = false;
  private unsubscribe: (() => void) | undefined;
  /** undici starts a request again on a new controller when a pipelined one ahead of it failed. */
  private controller: Dispatcher.DispatchController | undefined;

  constructor(
    private readonly signal: CallSignal,
    private readonly maxBytes: number,
    private readonly maxErrorBytes: number,
    private readonly resolve: (response: WholeResponse) => void,
    private readonly reject: (err: unknown) => void,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.signal.aborted) {
      controller.abort(this.signal.reason as Error);
      return;
    }
    this.unsubscribe ??= onAbort(this.signal, (reason) => this.controller?.abort(reason as Error));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.statusCode = statusCode;
    this.headers = headers;
    this.cap = statusCode >= 400 ? this.maxErrorBytes : this.maxBytes;
    // A declared length past the limit ends the answer before a byte is read: the connection is dropped, not drained.
    if (statusCode < 400 && Number(headers['content-length']) > this.maxBytes) this.tooLarge(controller);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    if (this.size + chunk.length <= this.cap) {
      this.parts.push(chunk);
      this.size += chunk.length;
      return;
    }
    if (this.statusCode < 400) {
      this.tooLarge(controller);
      return;
    }
    // An error answer is read only so far: what it says is in its first bytes.
    this.parts.push(chunk.subarray(0, this.cap - this.size));
    this.size = this.cap;
    this.finish();
    controller.abort(new Error('the rest of an upstream error answer is not read'));
  }

  onResponseEnd(): void {
    this.finish();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.fail(err);
  }

  private tooLarge(controller: Dispatcher.DispatchController): void {
    const err = new UpstreamTooLargeError('body', this.maxBytes);
    this.fail(err);
    controller.abort(err);
  }

  private finish(): void {
    if (this.settled) return;
    this.settled = true;
    this.unsubscribe?.();
    const body = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
    this.resolve({ statusCode: this.statusCode, headers: this.headers, body });
  }

  private fail(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.unsubscribe?.();
    this.reject(err);
  }
}
