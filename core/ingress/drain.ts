/**
 * A request refused before its body was read whole (413, or a form that failed midway): the client may still be
 * writing. Node closes a `Connection: close` answer's socket as soon as the answer is written, and the kernel then
 * answers the client's next bytes with a reset, which can reach the client before it has read the refusal: it
 * sees "connection reset" instead of the 413. So the close lingers, as web servers' lingering close does: the
 * answer goes with `Connection: close` and a FIN, and the rest of the body is read and dropped, at most
 * DRAIN_MAX_BYTES for at most DRAIN_MAX_MS; a client that sends more, or for longer, has had time to read the
 * answer, and its connection is cut.
 */
import type { Server, Socket } from 'node:net';
import type { Context } from 'koa';

/** Sockets still draining, per server: a gateway that closes cuts them rather than wait for their clients. */
const lingering = new WeakMap<Server, Set<Socket>>();

export function cutLingering(server: Server): void {
  for (const socket of lingering.get(server) ?? []) socket.destroy();
  lingering.delete(server);
}

export const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
export const DRAIN_MAX_MS = 10_000;

export function drainRefused(ctx: Pick<Context, 'req' | 'set'>): void {
  ctx.set('Connection', 'close');
  const { req } = ctx;
  const socket = req.socket;
  if (req.complete || req.destroyed || socket.destroyed) return;
  // Node ends an answer marked close with destroySoon(): half-close instead, so unread bytes meet no reset. The
  // server's sockets allow half-open, so the socket closes once the client's side ends too.
  socket.destroySoon = () => socket.end();
  const server = (socket as Socket & { server?: Server }).server;
  let held: Set<Socket> | undefined;
  if (server) {
    held = lingering.get(server) ?? new Set();
    lingering.set(server, held);
    held.add(socket);
    socket.once('close', () => held!.delete(socket));
  }
  let drained = 0;
  const cut = () => {
    stop();
    socket.destroy();
  };
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_MAX_BYTES) cut();
  };
  const timer = setTimeout(cut, DRAIN_MAX_MS).unref();
  const stop = () => {
    clearTimeout(timer);
    req.off('data', onData);
  };
  req.on('data', onData);
  req.once('end', stop);
  req.once('close', stop);
  req.resume();
}
