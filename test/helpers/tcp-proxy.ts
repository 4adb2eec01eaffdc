/**
 * A loopback TCP proxy in front of a store, for tests that make it misbehave without touching the shared server:
 * freeze() stops forwarding either way (connections stay open and nothing answers, as with a stopped process),
 * cut() destroys every connection and refuses new ones, restore() undoes either.
 */
import { connect, createServer, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  freeze(): void;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let state: 'open' | 'frozen' | 'cut' = 'open';
  const flow = (from: Socket, to: Socket) => from.on('data', (chunk: Buffer) => {
    to.write(chunk);
  });
  const server = createServer((client) => {
    if (state === 'cut') return void client.destroy();
    const upstream = connect(target.port, target.host);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    flow(client, upstream);
    flow(upstream, client);
    // A connection opened while frozen waits like the others.
    if (state === 'frozen') for (const socket of pair) socket.pause();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sockets = () => [...pairs].flat();
  return {
    port: (server.address() as { port: number }).port,
    freeze() {
      state = 'frozen';
      for (const socket of sockets()) socket.pause();
    },
    cut() {
      state = 'cut';
      for (const socket of sockets()) socket.destroy();
      pairs.clear();
    },
    restore() {
      state = 'open';
      for (const socket of sockets()) socket.resume();
    },
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets()) socket.destroy();
      pairs.clear();
      server.close(() => resolve());
    }),
  };
}
