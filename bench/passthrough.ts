/**
 * The bare Node pass-through: node:http in, undici out, nothing else (no parsing, no routing, no logging). It
 * is the physical limit of a Node proxy on this machine, the ceiling the gateway is compared with.
 * Run as a process: `UPSTREAM=http://127.0.0.1:N node --import tsx bench/passthrough.ts` prints `{"port": N}`.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host']);

function forwardable(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}

export async function startPassthrough(upstream: string, port = 0): Promise<{ url: string; close(): Promise<void> }> {
  const origin = new URL(upstream).origin;
  const agent = new Agent({ connections: 128, keepAliveTimeout: 60_000 });
  const server = createServer((req, res) => {
    agent.request({
      origin,
      path: req.url ?? '/',
      method: req.method as 'POST',
      headers: forwardable(req.headers),
      body: req.method === 'GET' || req.method === 'HEAD' ? null : req,
    }).then(({ statusCode, headers, body }) => {
      res.writeHead(statusCode, forwardable(headers));
      body.pipe(res);
      res.once('close', () => body.destroy());
    }, (err: Error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: err.message } }));
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await agent.close();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const proxy = await startPassthrough(process.env.UPSTREAM ?? 'http://127.0.0.1:1', Number(process.env.PORT ?? 0));
  process.stdout.write(`${JSON.stringify({ port: Number(new URL(proxy.url).port) })}\n`);
  process.on('SIGTERM', () => void proxy.close().then(() => process.exit(0)));
}
