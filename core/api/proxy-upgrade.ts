/**
 * WebSocket upgrades on the passthrough (/proxy/<slug>/..., for providers' native WebSocket APIs). Node hands
 * an upgrade request to the server's 'upgrade' listener instead of the app. This listener runs it through the
 * app all the same, on a response bound to the socket: the route's plugins (auth with the `proxy` capability,
 * ip-allow, rate limits) decide before anything is upgraded, and a refusal is an ordinary HTTP answer in the
 * canonical envelope, after which the connection closes. Two routes upgrade: the passthrough
 * (core/dispatch/passthrough-ws.ts) and /image-progress (core/api/image-progress.ts); any other route answers as
 * it would over HTTP.
 */
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { PendingUpgrade } from '../dispatch/passthrough-ws.ts';

export type { PendingUpgrade };

const pending = new WeakMap<IncomingMessage, PendingUpgrade>();

/** The socket of an upgrade request still to be answered, or undefined for a plain HTTP request. */
export const upgradeOf = (req: IncomingMessage): PendingUpgrade | undefined => pending.get(req);

/** Upgraded and upgrading sockets: the server no longer tracks them, so shutdown closes them from here. */
export class UpgradedSockets {
  private readonly open = new Set<Duplex>();

  listener(handle: (req: IncomingMessage, res: ServerResponse) => void) {
    return (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
      this.open.add(socket);
      socket.once('close', () => this.open.delete(socket));
      // A peer that resets the connection must not become an uncaught error.
      socket.on('error', () => socket.destroy());
      const res = new ServerResponse(req);
      res.assignSocket(socket as Socket);
      // An HTTP answer (a refusal, an upstream's non-101 answer) ends the connection.
      res.shouldKeepAlive = false;
      res.once('finish', () => socket.end());
      pending.set(req, { socket, head, res });
      handle(req, res);
    };
  }

  get size(): number {
    return this.open.size;
  }

  closeAll(): void {
    for (const socket of this.open) socket.destroy();
    this.open.clear();
  }
}
