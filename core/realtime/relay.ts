/**
 * One connected realtime session: the client's socket and the provider's, frames relayed verbatim both ways.
 *
 * Back-pressure: bytes handed to a socket and not yet written out are counted per direction; past
 * realtime.maxBufferedBytes the other side stops being read (ws pause(), so TCP pushes back on its sender) until
 * the writes drain. Nothing is queued in the gateway beyond that bound.
 *
 * Ends: the client closes (its code is passed on when it may be sent, else 1000), the provider closes (likewise,
 * else 1011), the provider fails (1011), the idle timer fires (1000, "idle timeout"), or the gateway shuts down
 * (1001). Whatever ends it closes both sides, then records the session closed with its usage, frees its slot and
 * reports the usage as metered work, once (again by the realtime.meter job when a plugin failed to take it).
 */
import WebSocket, { type RawData } from 'ws';
import type { RealtimeHook, ProviderTarget } from '../dispatch/provider.ts';
import type { RealtimeSessionRecord, RealtimeUsage } from '../store/realtime-sessions.ts';
import { SessionMeter } from './meter.ts';

export type Side = 'client' | 'provider';

/** How a relay ends: what is recorded, and the codes each side is closed with. */
export interface RelayEnd {
  reason: string;
  clientCode: number;
  providerCode: number;
  message?: string;
}

export interface RelayOptions {
  idleTimeoutMs: number;
  maxBufferedBytes: number;
  maxFrameBytes: number;
  connectTimeoutMs: number;
  /** Called once, when both sides are closed. */
  onEnd(end: RelayEnd, totals: RealtimeUsage): Promise<void>;
  onConnected(): void;
}

/** Codes a peer may put in a close frame (RFC 6455 7.4); others (1005, 1006, 1015...) are reported, never sent. */
const sendable = (code: number) => code === 1000 || code === 1001 || (code >= 1007 && code <= 1014 && code !== 1010) || (code >= 3000 && code <= 4999);
/** Close reasons are at most 123 bytes. */
const reasonText = (text: string) => Buffer.from(text).subarray(0, 123).toString();
/** How long a side may take to answer a close frame before its socket is cut. */
const CLOSE_WAIT_MS = 2000;

const frameBytes = (data: RawData): number =>
  Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : data instanceof ArrayBuffer ? data.byteLength : data.length;

export class Relay {
  private provider: WebSocket | undefined;
  private readonly meter: SessionMeter;
  private readonly pending: Record<Side, number> = { client: 0, provider: 0 };
  private idle: NodeJS.Timeout | undefined;
  private ending: RelayEnd | undefined;
  /** Settles once both sides are closed and the end recorded. */
  readonly done: Promise<void>;
  private finish!: () => void;

  constructor(
    readonly session: RealtimeSessionRecord,
    private readonly client: WebSocket,
    private readonly hook: RealtimeHook,
    private readonly target: ProviderTarget,
    private readonly options: RelayOptions,
  ) {
    this.meter = new SessionMeter(hook, session.settings);
    this.done = new Promise((resolve) => (this.finish = resolve));
  }

  start(): void {
    // Nothing from the client is read until the provider is open and the session's settings applied.
    this.client.pause();
    this.client.on('error', () => this.end({ reason: 'client_error', clientCode: 1011, providerCode: 1000 }));
    this.client.once('close', (code, reason) => this.end({
      reason: 'client_closed', clientCode: 1000, providerCode: sendable(code) ? code : 1000, message: reason.toString(),
    }));
    const { url, headers } = this.hook.connect(this.target);
    const provider = new WebSocket(url, { headers, handshakeTimeout: this.options.connectTimeoutMs, maxPayload: this.options.maxFrameBytes, perMessageDeflate: false });
    this.provider = provider;
    // A refused handshake (the provider's 401, 429...) comes here too: "Unexpected server response: 401".
    provider.on('error', (err) => this.end({ reason: 'upstream_error', clientCode: 1011, providerCode: 1011, message: `upstream error: ${err.message}` }));
    provider.once('close', (code, reason) => this.end({
      reason: 'upstream_closed', clientCode: sendable(code) ? code : 1011, providerCode: 1000, message: reason.toString(),
    }));
    provider.once('open', () => {
      if (this.ending) return;
      provider.send(JSON.stringify(this.hook.sessionUpdate(this.session.settings)));
      this.client.on('message', (data, isBinary) => this.relay('client', data, isBinary));
      provider.on('message', (data, isBinary) => this.relay('provider', data, isBinary));
      this.idle = setTimeout(() => this.end({ reason: 'idle_timeout', clientCode: 1000, providerCode: 1000, message: 'idle timeout' }), this.options.idleTimeoutMs);
      this.client.resume();
      this.options.onConnected();
    });
  }

  private relay(from: Side, data: RawData, isBinary: boolean): void {
    if (this.ending) return;
    this.idle?.refresh();
    if (isBinary) this.meter.binary(frameBytes(data), from);
    else this.meter.text(data.toString(), from);
    const to: Side = from === 'client' ? 'provider' : 'client';
    const destination = to === 'client' ? this.client : this.provider!;
    const source = from === 'client' ? this.client : this.provider!;
    const bytes = frameBytes(data);
    this.pending[to] += bytes;
    destination.send(data, { binary: isBinary }, () => {
      this.pending[to] -= bytes;
      if (source.isPaused && this.pending[to] <= this.options.maxBufferedBytes && !this.ending) source.resume();
    });
    if (this.pending[to] > this.options.maxBufferedBytes) source.pause();
  }

  /** Bytes written to a side and not yet flushed (tests, back-pressure). */
  buffered(side: Side): number {
    return this.pending[side];
  }

  /** Ends the session (idempotent): both sides closed with their codes, then the end recorded once. */
  end(end: RelayEnd): Promise<void> {
    if (this.ending) return this.done;
    this.ending = end;
    clearTimeout(this.idle);
    const closed = [closeSide(this.client, end.clientCode, end.message ?? end.reason)];
    if (this.provider) closed.push(closeSide(this.provider, end.providerCode, end.reason));
    // onEnd runs whatever happened while closing: the record and the slot must not be left behind.
    void Promise.allSettled(closed)
      .then(() => this.options.onEnd(end, this.meter.usage()))
      .catch(() => {})
      .finally(() => this.finish());
    return this.done;
  }
}

/** Sends a close frame and waits for the socket to close; a peer that does not answer has its socket cut. */
function closeSide(socket: WebSocket, code: number, reason: string): Promise<void> {
  if (socket.readyState === WebSocket.CLOSED) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => socket.terminate(), CLOSE_WAIT_MS);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.on('error', () => {});
    // A paused socket would never read the peer's answering close frame.
    if (socket.readyState === WebSocket.CONNECTING) socket.terminate();
    else if (socket.readyState === WebSocket.OPEN) {
      socket.resume();
      socket.close(code, reasonText(reason));
    }
  });
}
