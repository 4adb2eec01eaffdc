/**
 * A request's cancellation, without an AbortController until something asks for gw.signal. Making an
 * AbortSignal and having undici listen to it cost about 18 µs of CPU per upstream call (bench/analysis.md), and
 * a request that completes, the common case, never aborts: the core's own calls (the upstream, the origin
 * slots) subscribe here at the cost of an array push. A signal made later reports the same abort, reason included.
 */
import type { GatewayState } from './context.ts';

export class RequestAbort {
  private controller: AbortController | undefined;
  private done = false;
  private why: unknown;
  private listeners: Array<(reason: unknown) => void> | undefined;

  get aborted(): boolean {
    return this.done;
  }

  get reason(): unknown {
    return this.why;
  }

  /** The request's AbortSignal, made on first use (aborted at once when the request already was). */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.done) this.controller.abort(this.why);
    }
    return this.controller.signal;
  }

  abort(reason?: unknown): void {
    if (this.done) return;
    this.done = true;
    this.why = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
    this.controller?.abort(this.why);
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners) for (const listener of listeners) listener(this.why);
  }

  /** Calls `listener` once, on abort; returns what unsubscribes it. Subscribing after the abort calls nothing. */
  onAbort(listener: (reason: unknown) => void): () => void {
    if (this.done) return noop;
    (this.listeners ??= []).push(listener);
    return () => {
      const at = this.listeners?.indexOf(listener) ?? -1;
      if (at >= 0) this.listeners!.splice(at, 1);
    };
  }
}

const noop = () => {};

/** What a call is cancelled by: an AbortSignal, or a request's own RequestAbort. */
export type CallSignal = AbortSignal | RequestAbort;

/** An AbortSignal for APIs that take one (made now for a RequestAbort that had none). */
export function abortSignalOf(signal: CallSignal): AbortSignal {
  return signal instanceof RequestAbort ? signal.signal : signal;
}

/** Calls `listener` once when `signal` aborts; returns what unsubscribes it. */
export function onAbort(signal: CallSignal, listener: (reason: unknown) => void): () => void {
  if (signal instanceof RequestAbort) return signal.onAbort(listener);
  const handler = () => listener(signal.reason);
  signal.addEventListener('abort', handler, { once: true });
  return () => signal.removeEventListener('abort', handler);
}

// Under a private symbol, not in a WeakMap keyed by every request (see stages.ts).
const ABORT = Symbol('aigw.abort');

type WithAbort = GatewayState & { [ABORT]?: RequestAbort };

export function attachAbort(gw: GatewayState, abort: RequestAbort): void {
  (gw as WithAbort)[ABORT] = abort;
}

/** What the core's calls for this request are cancelled by: its RequestAbort, or gw.signal for a state built elsewhere. */
export function callSignal(gw: GatewayState): CallSignal {
  return (gw as WithAbort)[ABORT] ?? gw.signal;
}
