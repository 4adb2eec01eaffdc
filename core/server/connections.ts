/**
 * A cap on open client connections that a flood of idle sockets cannot use to lock everyone out. Node's own
 * `server.maxConnections` drops each new connection past the cap, so sockets that send nothing would keep
 * /healthz and every real caller away until they time out. Here a new connection past the cap first evicts
 * the connection that has waited longest without a request in progress (one that never sent a full request,
 * or a keep-alive socket between requests); only when every connection is busy is the new one refused.
 * Refusals and evictions are counted and logged, at most one line per interval.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { LogThrottle } from '../log-throttle.ts';
import type { Logger } from '../logger.ts';

const LOG_INTERVAL_MS = 10_000;

export interface ConnectionStats {
  open: number;
  max: number;
  /** New connections closed at once because every open one was busy. */
  refused: number;
  /** Idle connections closed to make room for a new one. */
  evicted: number;
}

export class ConnectionLimiter {
  /** Sockets with no request in progress, longest waiting first (a Map keeps insertion order). */
  private readonly waiting = new Map<Socket, true>();
  private open = 0;
  private refused = 0;
  private evicted = 0;
  private readonly throttle: LogThrottle;

  constructor(private readonly max: number, private readonly logger: Logger, now?: () => number) {
    this.throttle = new LogThrottle(LOG_INTERVAL_MS, now);
  }

  /**
   * An upgraded socket (WebSocket) is a long-lived stream and never counts as waiting. Listening for 'upgrade'
   * makes Node hand upgrade requests to 'upgrade' listeners only, so the server must have its own upgrade
   * handler, as the gateway's does (core/api/proxy-upgrade.ts).
   */
  attach(server: Server): void {
    server.on('connection', (socket: Socket) => this.accept(socket));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.busy(req.socket as Socket, res));
    server.on('upgrade', (_req: IncomingMessage, socket: Socket) => this.waiting.delete(socket));
  }

  stats(): ConnectionStats {
    return { open: this.open, max: this.max, refused: this.refused, evicted: this.evicted };
  }

  private accept(socket: Socket): void {
    if (this.open >= this.max && !this.evictOldestWaiting()) {
      this.refused++;
      this.report('refused');
      socket.destroy();
      return;
    }
    this.open++;
    this.waiting.set(socket, true);
    socket.once('close', () => {
      this.open--;
      this.waiting.delete(socket);
    });
  }

  private busy(socket: Socket, res: ServerResponse): void {
    this.waiting.delete(socket);
    res.once('close', () => {
      // Re-inserted at the end: it starts waiting now, behind every socket that waited longer.
      if (!socket.destroyed) this.waiting.set(socket, true);
    });
  }

  private evictOldestWaiting(): boolean {
    for (const socket of this.waiting.keys()) {
      this.waiting.delete(socket);
      if (socket.destroyed) continue;
      this.evicted++;
      this.report('evicted');
      socket.destroy();
      return true;
    }
    return false;
  }

  private report(what: 'refused' | 'evicted'): void {
    const sinceLastLog = this.throttle.due();
    if (sinceLastLog === null) return;
    this.logger.warn(
      { connections: this.stats(), sinceLastLog, last: what },
      'server.maxConnections reached: idle connections are closed to admit new ones, and new ones are refused while all are busy',
    );
  }
}
